// Prints the logs of several replicas at once, each line prefixed `<role>/<replica> `, one
// thread per replica (as TorchX does), for `torchx log` and `torchx run --log`.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "torchx/plugins/registry.h"
#include "torchx/runner/runner.h"
#include "torchx/schedulers/scheduler.h"
#include "torchx/status.h"

namespace torchx::cli {

struct ReplicaRef {
  std::string role;
  int replica = 0;
};

/// Streams the replicas' logs to `out` until each iterator ends. `json` prints one JSON object
/// per line ({"role", "replica", "line"}; {"driver": true, "line"} for a composite's driver log,
/// `options.driver`, read as one replica). Returns the first error.
Status StreamLogs(plugins::PluginRegistry& registry, const std::string& handle, const std::vector<ReplicaRef>& replicas,
                  const schedulers::LogOptions& options, bool json, std::FILE* out = stdout);

/// Every replica of the app, in role order.
Result<std::vector<ReplicaRef>> AllReplicas(runner::Runner& runner, const std::string& handle);

}  // namespace torchx::cli
