// `torchx pipeline run [-s S] [-cfg k=v,...] [--name N] [--dryrun] [--wait] FILE`: runs a pipeline
// file (docs/pipelines.md) and prints its handle, `pipeline://<session>/<id>`, which status /
// wait / log / cancel / list / describe / delete take like any app's.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "composite_launch.h"
#include "torchx/pipelines/pipeline.h"
#include "torchx/plugins/registry.h"

namespace torchx::cli {

Handler AddPipelineCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  auto opts = std::make_shared<DocumentRunOptions>();
  opts->kind = std::string(pipelines::kSchedulerName);
  CLI::App* cmd = app.add_subcommand("pipeline", "Run a pipeline file: dependent steps as one unit");
  cmd->require_subcommand(1);
  CLI::App* run = cmd->add_subcommand("run", "Validate a pipeline file, then submit it (prints its handle)");
  run->add_option("file", opts->file, "The pipeline file (YAML or JSON; see docs/pipelines.md)")->required();
  run->add_option("-s,--scheduler", opts->scheduler,
                  "Scheduler for steps that name none (default: the file's, else [cli:run] scheduler, else " +
                      plugins::DefaultSchedulerName() + ")");
  run->add_option("--cfg,--scheduler_args", opts->cfg,
                  "Options for the steps on that scheduler: k1=v1,k2=v2 (TorchX spelling -cfg accepted)");
  run->add_option("--name", opts->name, "The pipeline's name (default: the file's `name`, else pipeline)");
  run->add_flag("--dryrun", opts->dryrun, "Validate and print every step's request; submit nothing");
  run->add_flag("--wait", opts->wait, "Wait for the pipeline to end; exit 0 only if every step succeeded");
  return [opts, &registry] { return RunDocument(*opts, registry); };
}

}  // namespace torchx::cli
