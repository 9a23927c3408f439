// torchx-pipeline-driver <state_dir> <pipeline_id>: moves one pipeline forward until it ends,
// submitting each step when its dependencies have succeeded. Started detached by
// `torchx pipeline run` (and again by a status call if it died); one per pipeline (an flock).
#include <cstdio>
#include <exception>

#include "torchx/pipelines/pipeline.h"
#include "torchx/plugins/registry.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: torchx-pipeline-driver <state_dir> <pipeline_id>\n");
    return 2;
  }
  // The process the launcher waits for exits as soon as the driver holds the pipeline's lock.
  int exit_code = 0;
  int ready_fd = torchx::pipelines::DaemonizeDriver(exit_code);
  if (ready_fd < 0) return exit_code;
  try {
    // The same composition as the CLI's: steps may run on any scheduler it knows.
    torchx::plugins::PluginRegistry registry;
    torchx::plugins::RegisterBuiltins(registry);
    torchx::plugins::AddPythonBridgeProvider(registry);
    torchx::pipelines::RegisterPipelineScheduler(registry);
    return torchx::pipelines::RunPipelineDriver(registry, argv[1], argv[2], ready_fd);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torchx-pipeline-driver: internal error: %s\n", e.what());
    return 1;
  }
}
