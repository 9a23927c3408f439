// Sweeps: many variants of one job run as one unit. A sweep file (or `torchx sweep run`'s inline
// form) names one component (or an AppDef), a search space and how many trials may run at once;
// every trial is built and dry-run before anything is submitted, then a detached driver (the
// pipelines' torchx-composite-driver) submits the trials, at most `max_parallel` at a time, reads
// what each reports through TorchX's tracker API and keeps it in the sweep's record. The run answers
// `sweep://<session>/<id>`, which status / wait / log / cancel / list / describe / delete take
// like any app's (the "sweep" scheduler, registered at the composition root); `torchx sweep
// status` prints the trials with their values and metrics, `torchx sweep best` the best one.
// docs/sweeps.md is the user's guide; docs/architecture.md ("Composite jobs") the contract.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "torchx/composite/launch.h"
#include "torchx/config/torchx_config.h"
#include "torchx/plugins/registry.h"
#include "torchx/runner/runner.h"
#include "torchx/specs/app_def.h"
#include "torchx/status.h"
#include "torchx/value.h"

namespace torchx::sweeps {

/// The scheduler name sweep handles carry.
inline constexpr std::string_view kSchedulerName = "sweep";

/// A search larger than this is almost surely a mistake (and its record would not be small).
inline constexpr std::uint64_t kMaxTrials = 100000;

/// One swept parameter: a grid's values, or a distribution a random search draws from.
struct ParamSpec {
  enum class Kind { kValues, kUniform, kLogUniform, kRandInt };
  std::string name;
  Kind kind = Kind::kValues;
  std::vector<Value> values;  ///< kValues: the grid's values, or a random search's choices
  double low = 0;             ///< distributions: the bounds (kRandInt: integers, both included)
  double high = 0;
};

/// kAx: Bayesian optimisation through Ax's Client API: the trials' values are proposed by Ax as the
/// sweep runs, from what the trials before them reported (uniform/loguniform: float ranges,
/// randint: integer ranges, values: choices).
enum class SpaceType { kGrid, kRandom, kAx };

struct Space {
  SpaceType type = SpaceType::kGrid;
  std::vector<ParamSpec> params;  ///< in the file's order
  std::uint64_t seed = 0;         ///< random: the generator's seed; ax: Ax's random seed
  int trials = 0;                 ///< random: how many to draw; ax: how many Ax proposes
};

/// A trial's values, in the space's parameter order.
using Assignment = std::vector<std::pair<std::string, Value>>;

/// Every trial of `space`, in order. Grid: the product of the values, the first parameter
/// varying slowest (itertools.product). Random: `trials` draws from SplitMix64 seeded with `seed`,
/// one draw per parameter per trial in parameter order (docs/sweeps.md gives the arithmetic), so
/// the CLI and Python produce the same trials. Ax: none (Ax proposes them while the sweep runs).
std::vector<Assignment> Trials(const Space& space);
/// How many trials Trials() yields (without making them).
std::uint64_t TrialCount(const Space& space);

/// A value as it is put into a command line: strings as they are, integers in decimal, floats in
/// their shortest round-trip form (0.1, 1e-05), booleans as true/false.
std::string ValueText(const Value& v);

/// What the sweep optimises, read from what the trials report.
struct Objective {
  std::string metric;
  bool minimize = true;
  bool best = false;  ///< a trial's value: its best report (else its last)
};

struct SweepSpec {
  std::string name;
  std::string component;             ///< a component name or file (empty when `app` is given)
  std::vector<std::string> args;     ///< its arguments; `@{name}` marks a swept value, `@@{` a literal `@{`
  std::optional<specs::AppDef> app;  ///< an inline AppDef instead (placeholders in args and env)
  std::string scheduler;             ///< empty: the run's
  std::string cfg_json = "{}";       ///< the trials' scheduler options
  Space space;
  int max_parallel = 0;  ///< 0: no limit
  int max_failures = 0;  ///< 0: never stop early
  std::optional<Objective> objective;
  /// Its `managed:` block (managed::ParseChildPolicy's JSON): every trial runs as a managed job,
  /// recovered after infrastructure failures. Empty: plain jobs.
  std::string managed_json;
};

/// Parses a sweep file (YAML or JSON); errors name the field (`space.parameters.lr.low`).
Result<SweepSpec> ParseSweep(std::string_view text, const std::string& origin = "sweep");
Result<SweepSpec> LoadSweepFile(const std::string& path);

/// One `-p name=...` of the inline form: `lr=0.1,0.01` (grid values, read as YAML scalars) or
/// `lr=loguniform(1e-4,1e-1)`, `uniform(a,b)`, `randint(a,b)`, `choice(a,b,...)` (random).
Result<ParamSpec> ParseInlineParam(std::string_view text);

/// A sweep of a component (the CLI's inline form: `-p` parameters, an objective) written as the
/// file that runs it, JSON: what the launch entry takes. kInvalidArgument for a parameter given
/// twice.
Result<std::string> SweepDocument(const SweepSpec& spec);

/// The `@{name}` placeholders in `text`, in order (`@@{` is a literal `@{`).
Result<std::vector<std::string>> Placeholders(std::string_view text, const std::string& where);
/// `text` with each `@{name}` replaced by its value and `@@{` by `@{`.
std::string Substitute(std::string_view text, const Assignment& values);

/// What a run takes from the edge besides the sweep.
struct RunRequest {
  SweepSpec spec;
  std::string scheduler;            ///< `-s`: overrides the file's (empty: the file's, else the default)
  std::string cfg;                  ///< `-cfg k=v,...`
  std::optional<int> max_parallel;  ///< overrides the file's
  std::optional<int> max_failures;  ///< overrides the file's
};

/// One trial, checked.
struct PlannedTrial {
  int index = 0;
  Assignment values;
};

struct Plan {
  std::string id;
  std::string name;
  std::string session;
  std::string scheduler;
  std::string handle;
  int max_parallel = 0;
  std::vector<PlannedTrial> trials;
  std::string first_request;  ///< the first trial's request as its scheduler prints it
  bool managed = false;       ///< every trial a managed job
  std::string record_json;    ///< the record LaunchSweep creates
  /// Every trial's dry run, when the trials go to the scheduler as one array job
  /// (Capability::kNativeArrays, every trial one replica); empty when the driver submits them.
  std::vector<schedulers::DryRunInfo> array_tasks;
};

/// Builds and dry-runs every trial: a bad space, a swept name that is neither a parameter of the
/// component nor a placeholder in its arguments, or a value the component refuses is an error
/// naming it (and the trial), and nothing is submitted. Trials get TORCHX_SWEEP_ID (the handle),
/// TORCHX_TRIAL_INDEX and the sweep's tracker (TORCHX_TRACKERS=fsspec) in their env.
Result<Plan> PlanSweep(runner::Runner& runner, const config::TorchxConfig& config, const RunRequest& request);

/// Human-readable form of a plan (`torchx sweep run --dryrun`): the trials' values and the first
/// trial's request.
std::string RenderPlan(const Plan& plan);

/// Records the plan and starts it: with array tasks, every trial at once as one array job of at
/// most max_parallel running (the scheduler's own throttle), else trial by trial; then the
/// driver, which follows the trials and reads their reports. Returns the sweep's handle. Nothing
/// is left recorded when the start fails.
Result<std::string> LaunchSweep(runner::Runner& runner, const Plan& plan);

/// One trial as `sweep status` shows it.
struct TrialRow {
  int index = 0;
  Assignment values;
  specs::AppState state = specs::AppState::kUnsubmitted;
  std::string handle;
  std::string msg;
  std::optional<double> submitted;
  std::optional<double> ended;
  std::vector<std::pair<std::string, double>> metrics;  ///< each metric's value (last, or best for the objective)
  std::optional<double> objective;
  std::string generator;  ///< ax: what proposed the trial (Ax's generation node: Sobol, MBM, ...)
  /// A failed trial's last stderr lines (its failed replicas', in order), where asked for.
  std::vector<std::string> stderr_tail;
};

struct SweepView {
  std::string handle;
  std::string name;
  specs::AppState state = specs::AppState::kUnsubmitted;
  std::string msg;
  std::optional<Objective> objective;
  std::vector<TrialRow> trials;  ///< sorted by the objective (best first; trials without one last), else by index
  std::optional<int> best;       ///< the index of the best trial with an objective value
  /// While it runs: why the objective has no value though trials report (a typo'd name, with
  /// "did you mean"). An ended sweep says it in `msg`.
  std::optional<std::string> objective_unreported;
};

/// The sweep behind `handle` (`sweep://session/id`), from its record (a dead driver restarted;
/// `runner` answers for the trials' scheduler when none can start).
/// With `failure_lines`, each failed trial's last that many stderr lines (`sweep status`; each is
/// a log read).
Result<SweepView> ViewSweep(runner::Runner& runner, const std::string& handle, size_t failure_lines = 0);
/// `sweep status`'s table, and its JSON (`--json`).
std::string RenderSweepTable(const SweepView& view);
std::string SweepViewToJson(const SweepView& view);

/// The sweep behind `handle` as the file that runs it (`torchx describe`; `torchx sweep run`
/// takes it back): YAML, or JSON with `json`.
Result<std::string> SweepDefinition(const std::string& handle, bool json);

/// The kind's planner (composite/launch.h): the document is a sweep file (the
/// CLI's inline form is written as one); `-s`/`-cfg` go to the trials. Launched
/// through torchx::PlanComposite, the one entry of the CLI's verbs and Python alike.
Result<composite::PlannedComposite> PlanLaunch(runner::Runner& runner, const config::TorchxConfig& config,
                                               const composite::LaunchRequest& request);

/// Registers the "sweep" scheduler, whose calls reach the trials' schedulers through Runners over
/// `registry` (which must outlive every scheduler it builds).
void RegisterSweepScheduler(plugins::PluginRegistry& registry);

/// The body of torchx-composite-driver for a sweep (see pipelines::RunPipelineDriver).
int RunSweepDriver(plugins::PluginRegistry& registry, const std::string& state_dir, const std::string& id,
                   int ready_fd);

}  // namespace torchx::sweeps
