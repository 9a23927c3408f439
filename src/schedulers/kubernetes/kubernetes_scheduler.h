// `kubernetes`: TorchX's Volcano back-end. Each app is a batch.volcano.sh/v1alpha1 Job created
// through the API server's REST interface (kubeconfig auth, libcurl); app ids are
// `<namespace>:<job name>`. See docs/kubernetes.md.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers::kubernetes {

std::unique_ptr<Scheduler> MakeKubernetesScheduler(const std::string& session_name);

/// `kubernetes`, for the build's table of linked-in back-ends.
std::vector<SchedulerEntry> BackendSchedulers();

}  // namespace torchx::schedulers::kubernetes
