// `kubernetes`: TorchX's Volcano back-end. Each app is a batch.volcano.sh/v1alpha1 Job created
// through the API server's REST interface (kubeconfig auth; an internal::HttpClient, which unit
// tests replace with a fake API server: kubernetes_scheduler_test.cc); app ids are
// `<namespace>:<job name>`. See docs/kubernetes.md.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "http/http.h"
#include "schedulers/kubernetes/kube_config.h"
#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers::kubernetes {

/// Every API server and container engine (workspace images) call goes through `http`
/// (MakeCurlHttpClient() for real ones). `connection`: where the API server is and how to
/// authenticate; nullopt reads the kubeconfig on first use (LoadKubeConfig, exec plugins only
/// with TORCHX_KUBERNETES_ALLOW_EXEC=1).
std::unique_ptr<Scheduler> MakeKubernetesScheduler(const std::string& session_name,
                                                   std::shared_ptr<internal::HttpClient> http,
                                                   std::optional<KubeConnection> connection = std::nullopt,
                                                   std::shared_ptr<const Clock> clock = nullptr);

/// `kubernetes` over libcurl and the kubeconfig, for the build's table of linked-in back-ends.
std::vector<SchedulerEntry> BackendSchedulers();

}  // namespace torchx::schedulers::kubernetes
