#include "torchx/composite_kinds.h"

#include <cstdio>

#include "torchx/managed/managed.h"
#include "torchx/pipelines/pipeline.h"
#include "torchx/sweeps/sweep.h"

namespace torchx {

void RegisterCompositeKinds(plugins::PluginRegistry& registry) {
  pipelines::RegisterPipelineScheduler(registry);
  sweeps::RegisterSweepScheduler(registry);
  managed::RegisterManagedScheduler(registry);
}

int RunCompositeDriver(plugins::PluginRegistry& registry, std::string_view kind, const std::string& state_dir,
                       const std::string& id, int ready_fd) {
  // The names StartDriver passes: each kind's driver is started with its own.
  if (kind == "managed") return managed::RunManagedDriver(registry, state_dir, id, ready_fd);
  if (kind == "sweep") return sweeps::RunSweepDriver(registry, state_dir, id, ready_fd);
  if (kind == "pipeline") return pipelines::RunPipelineDriver(registry, state_dir, id, ready_fd);
  std::fprintf(stderr, "torchx composite driver: unknown kind `%.*s` (this build has: pipeline, sweep, managed)\n",
               static_cast<int>(kind.size()), kind.data());
  return 2;
}

}  // namespace torchx
