// `torchx pipeline run [-s S] [-cfg k=v,...] [--name N] [--dryrun] [--wait] FILE`: runs a pipeline
// file (docs/pipelines.md) and prints its handle, `pipeline://<session>/<id>`, which status /
// wait / log / cancel / list / describe / delete take like any app's.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "common.h"
#include "exit_codes.h"
#include "interrupt_watch.h"
#include "torchx/pipelines/pipeline.h"
#include "torchx/plugins/registry.h"
#include "wait_display.h"

namespace torchx::cli {
namespace {

struct PipelineRunOptions {
  std::string file;
  std::string scheduler;
  std::string cfg;
  std::string name;
  bool dryrun = false;
  bool wait = false;
};

int RunPipeline(const PipelineRunOptions& opts, plugins::PluginRegistry& registry) {
  auto config = LoadConfig();
  if (!config) return ReportError(config.error());
  auto spec = pipelines::LoadPipelineFile(opts.file);
  if (!spec) return ReportError(spec.error());
  pipelines::RunRequest request{std::move(*spec), opts.scheduler, opts.cfg, opts.name};
  if (request.scheduler.empty()) request.scheduler = config->CliDefault("run", "scheduler").value_or("");
  runner::Runner runner(registry, RunnerOptionsFrom(*config));
  auto plan = pipelines::PlanPipeline(runner, *config, request);
  if (!plan) return ReportError(plan.error());
  if (opts.dryrun) {
    std::fputs(pipelines::RenderPlan(*plan).c_str(), stdout);
    return kExitOk;
  }
  // With --wait, Ctrl-C or SIGTERM from the launch on cancels a pipeline with a step on this host.
  std::optional<InterruptWatch> interrupt;
  if (opts.wait) {
    std::vector<std::string> where;
    for (const pipelines::PlannedStep& step : plan->steps) where.push_back(step.scheduler);
    interrupt.emplace(runner, InterruptCancels(runner, where));
  }
  auto handle = pipelines::LaunchPipeline(runner, *plan);
  if (!handle) return ReportError(handle.error());
  std::printf("%s\n", handle->c_str());
  std::fflush(stdout);
  if (!opts.wait) return kExitOk;
  interrupt->Arm(*handle);
  auto status = WaitWithDisplay(runner, *handle);
  interrupt->SettleIfInterrupted();
  if (!status) return ReportError(status.error());
  if (!*status) return ReportError(AppNotFound(*handle));
  if (!(*status)->msg.empty()) std::fprintf(stderr, "torchx: %s\n", (*status)->msg.c_str());
  return (*status)->state == specs::AppState::kSucceeded ? kExitOk : kExitFailure;
}

}  // namespace

Handler AddPipelineCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  auto opts = std::make_shared<PipelineRunOptions>();
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
  return [opts, &registry] { return RunPipeline(*opts, registry); };
}

}  // namespace torchx::cli
