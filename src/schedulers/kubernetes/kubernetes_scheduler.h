// `kubernetes`: TorchX's Volcano back-end. Each app is a batch.volcano.sh/v1alpha1 Job created
// through the API server's REST interface (kubeconfig auth, libcurl); app ids are
// `<namespace>:<job name>`. See docs/kubernetes.md.
#pragma once

#include <memory>
#include <string>

#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers::kubernetes {

std::unique_ptr<Scheduler> MakeKubernetesScheduler(const std::string& session_name);

}  // namespace torchx::schedulers::kubernetes
