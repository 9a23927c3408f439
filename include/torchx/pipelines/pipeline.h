// Pipelines: dependent jobs run as one unit. A pipeline file names steps, each a component with
// its arguments (or an AppDef), the steps it depends on, and optionally its own scheduler and
// options. `torchx pipeline run` validates every step and dry-runs it before anything is
// submitted, then starts the pipeline:
//   - every step on one scheduler that sequences jobs itself (Capability::kNativeDependencies,
//     e.g. `--dependency=afterok` on a batch system): the whole DAG is submitted at once, each job made to
//     wait for its dependencies by the scheduler, which cancels the dependents of a failed job;
//   - otherwise: a detached driver (torchx-composite-driver) submits each step when its
//     dependencies have succeeded, so the terminal may close.
// docs/architecture.md ("Composite jobs") is the contract pipelines follow.
// The run answers a handle `pipeline://<session>/<id>` that status / wait / log / cancel / list /
// describe / delete take like any app's: the "pipeline" scheduler, registered at the composition
// root, answers them from the pipeline's record and its steps' schedulers.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torchx/composite/launch.h"
#include "torchx/config/torchx_config.h"
#include "torchx/plugins/registry.h"
#include "torchx/runner/runner.h"
#include "torchx/schedulers/scheduler.h"
#include "torchx/specs/app_def.h"
#include "torchx/status.h"

namespace torchx::pipelines {

/// The scheduler name pipeline handles carry.
inline constexpr std::string_view kSchedulerName = "pipeline";

/// One step as the file gives it.
struct StepSpec {
  std::string name;
  std::string component;             ///< a component name or file (empty when `app` is given)
  std::vector<std::string> args;     ///< its CLI-style arguments
  std::optional<specs::AppDef> app;  ///< an inline AppDef instead of a component
  std::vector<std::string> depends_on;
  std::string scheduler;        ///< empty: the pipeline's
  std::string cfg_json = "{}";  ///< a JSON object of this step's scheduler options
  /// Its `managed:` block (managed::ParseChildPolicy's JSON): the step runs as a managed job,
  /// recovered after infrastructure failures. Empty: it runs as a plain job.
  std::string managed_json;
};

/// A pipeline file, its steps in dependency order (each after the steps it depends on).
struct PipelineSpec {
  std::string name;
  std::string scheduler;        ///< the steps' default scheduler; empty: the run's
  std::string cfg_json = "{}";  ///< options for steps on the default scheduler
  std::vector<StepSpec> steps;
};

/// Parses a pipeline (YAML or JSON) and checks its graph: duplicate or malformed step names,
/// unknown dependencies (with "did you mean"), cycles (named step by step). Errors name the step
/// and field (`steps.train.depends_on[0]`). `origin` prefixes them (the file's path).
Result<PipelineSpec> ParsePipeline(std::string_view text, const std::string& origin = "pipeline");
Result<PipelineSpec> LoadPipelineFile(const std::string& path);

/// What a run takes from the edge besides the file.
struct RunRequest {
  PipelineSpec spec;
  std::string
      scheduler;     ///< `-s`: overrides the file's default scheduler (empty: the file's, else the build's default)
  std::string cfg;   ///< `-cfg k=v,...`: options for the steps on the default scheduler
  std::string name;  ///< overrides the file's name
};

/// One step, ready to submit.
struct PlannedStep {
  std::string name;
  std::vector<std::string> depends_on;
  std::string scheduler;
  specs::Cfg cfg;  ///< resolved against the scheduler's options, .torchxconfig defaults applied
  /// Its app is what is submitted (with the env the runner injects); a managed step's is on the
  /// `managed` scheduler, its payload the managed job's record (managed::PlanManagedChild).
  schedulers::DryRunInfo dryrun;
  bool managed = false;
};

/// Who starts each step once its dependencies succeeded.
enum class Sequencer {
  kDriver,     ///< the pipeline's detached driver submits each step in turn
  kScheduler,  ///< every step on one scheduler with native dependencies: submitted at once
};
/// "driver" / "scheduler": the record's `sequenced_by`.
std::string_view SequencerName(Sequencer s);

struct Plan {
  std::string id;
  std::string name;
  std::string session;
  Sequencer sequenced_by = Sequencer::kDriver;
  std::vector<PlannedStep> steps;
};

/// Builds every step (component, arguments, options) and dry-runs it: any error names the step
/// and field and nothing is submitted. Steps get TORCHX_PIPELINE (the handle) and
/// TORCHX_PIPELINE_STEP in their env.
Result<Plan> PlanPipeline(runner::Runner& runner, const config::TorchxConfig& config, const RunRequest& request);

/// Human-readable form of a plan (`torchx pipeline run --dryrun`).
std::string RenderPlan(const Plan& plan);

/// Records the plan and starts it (sequenced by the scheduler: submits every step; else: starts the
/// driver). Returns
/// the pipeline's handle. Nothing is left recorded when the start fails.
Result<std::string> LaunchPipeline(runner::Runner& runner, const Plan& plan);

/// The kind's planner (composite/launch.h): the document is a pipeline file;
/// `-s`/`-cfg` go to the steps on the default scheduler. Launched
/// through torchx::PlanComposite, the one entry of the CLI's verbs and Python alike.
Result<composite::PlannedComposite> PlanLaunch(runner::Runner& runner, const config::TorchxConfig& config,
                                               const composite::LaunchRequest& request);

/// Registers the "pipeline" scheduler, whose calls reach the steps' schedulers through Runners
/// over `registry` (which must outlive every scheduler it builds).
void RegisterPipelineScheduler(plugins::PluginRegistry& registry);

/// The body of torchx-composite-driver: takes pipeline `id`'s lock (writes 'y' to `ready_fd` once
/// it holds it, or once it finds another driver holding it, then closes it) and runs the pipeline
/// of the store in `state_dir` to a terminal state. Returns a process exit code.
int RunPipelineDriver(plugins::PluginRegistry& registry, const std::string& state_dir, const std::string& id,
                      int ready_fd);

}  // namespace torchx::pipelines
