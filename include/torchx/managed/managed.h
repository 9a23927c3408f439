// Managed jobs: one app kept running through what is not the user's fault. `torchx run --managed`
// (Python: Runner.run(..., managed=True)) hands the app to a detached driver (the pipelines'
// torchx-composite-driver) that watches it with nobody calling; when it ends in a failure its
// scheduler classifies as infrastructure (a node failure, a preemption, an eviction, a lost engine
// or supervisor; Scheduler::ClassifyFailure) it submits the same AppDef again, up to
// `max_recoveries` times per target, then fails over to the next target (`--failover`). Every
// attempt gets the same TORCHX_CHECKPOINT_DIR and its TORCHX_RECOVERY_COUNT. The run answers
// `managed://<session>/<id>`, which status / wait / log / cancel / list / describe / delete take
// like any app's (the "managed" scheduler, registered at the composition root). docs/managed.md is
// the user's guide; docs/architecture.md ("Composite jobs") the contract.
#pragma once

#include <optional>
#include <set>
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

namespace torchx::managed {

/// The scheduler name managed handles carry.
inline constexpr std::string_view kSchedulerName = "managed";

/// What every attempt's roles get in their environment.
inline constexpr std::string_view kCheckpointDirEnv = "TORCHX_CHECKPOINT_DIR";
inline constexpr std::string_view kRecoveryCountEnv = "TORCHX_RECOVERY_COUNT";
inline constexpr std::string_view kManagedHandleEnv = "TORCHX_MANAGED_HANDLE";

/// The causes recovered without being asked: what is never the app's fault.
std::set<schedulers::FailureCause> DefaultRecoverOn();

/// One place the app may run: a scheduler and its options (`-cfg`'s form).
struct Target {
  std::string scheduler;
  std::string cfg;       ///< `k=v,k2=v2`; empty: none (.torchxconfig's still apply)
  std::string cfg_json;  ///< or a JSON object of typed values (Python's cfg dicts); wins when set
};

/// `SCHEDULER[:k=v,k2=v2]` (`--failover slurm:partition=gpu-b,qos=high`, `--failover local_cwd`).
Result<Target> ParseTarget(std::string_view text);

/// How a managed run recovers.
struct Policy {
  int max_recoveries = 3;  ///< per target: new submissions after a recoverable failure
  std::set<schedulers::FailureCause> recover_on = DefaultRecoverOn();
  std::optional<double> start_timeout;  ///< seconds an attempt may wait to start before the next target
};

/// `--recover_on` values: each a cause name (user_error, time_limit, out_of_memory, unknown, ...),
/// or several comma-separated, added to the defaults. kInvalidArgument naming the field
/// (`<field_prefix>max_recoveries`: `--max_recoveries` on the command line, `steps.a.managed.max_recoveries`
/// in a file), the value and the choices; `cancelled` is refused (a cancel is a person's decision).
Result<Policy> PolicyWith(int max_recoveries, const std::vector<std::string>& recover_on,
                          std::optional<std::string> start_timeout, std::string_view field_prefix = "--");

/// A duration: `90` (seconds), `90s`, `15m`, `2h`. kInvalidArgument naming `what`.
Result<double> ParseDuration(std::string_view text, std::string_view what);

/// What a launch takes: the app (as a Runner dry run built it: components resolved, TorchX's env
/// injected), where it may run (the first target is `-s`/`-cfg`), and how it recovers.
struct LaunchRequest {
  specs::AppDef app;
  std::vector<Target> targets;
  Policy policy;
  std::string checkpoint_dir;  ///< empty: <cwd>/.torchx/checkpoints/<id>
  std::string workspace;       ///< refused for now: each target would need its own build
};

/// Every target's options resolved and its dry run made (the first attempt's app, as it would
/// be submitted), nothing submitted; the first error names the target.
struct Plan {
  std::string id;
  std::string handle;
  std::string record_json;                       ///< the record as it will be created
  std::vector<schedulers::DryRunInfo> dry_runs;  ///< one per target
};
Result<Plan> PlanManaged(runner::Runner& runner, const config::TorchxConfig& config, const LaunchRequest& request);
/// `torchx run --managed --dryrun`'s text: the policy and each target's request.
std::string RenderPlan(const Plan& plan);
/// Records the run and starts its driver; returns the handle. Nothing is left behind on failure.
Result<std::string> LaunchManaged(const Plan& plan);

/// A composite's child run as a managed job (a pipeline step's `managed:` block, a sweep file's,
/// `sweep run --managed`): the keys of `run --managed`. Such a child is a managed job of its own
/// (managed://...) that its composite submits, watches, cancels and deletes like any other child.
struct ChildPolicy {
  Policy policy;
  std::vector<Target> failover;  ///< tried after the child's own scheduler
  /// Each child's TORCHX_CHECKPOINT_DIR is `<dir>/<child>` (the step's name, the trial's index);
  /// empty: <cwd>/.torchx/checkpoints/<composite id>.
  std::string checkpoint_dir;
};

/// A `managed:` block, the text of a JSON object with any of max_recoveries, recover_on (a list or
/// a comma-separated string), failover (a list of `SCHEDULER[:k=v,...]` or {scheduler, cfg}),
/// start_timeout (seconds or `15m`) and checkpoint_dir. Errors name `where.<key>`.
Result<ChildPolicy> ParseChildPolicy(std::string_view json_text, const std::string& where);
/// Its JSON (what a composite's record keeps; ParseChildPolicy reads it back).
std::string ChildPolicyToJson(const ChildPolicy& p);

/// `p` with every failover target's options resolved now, against `config` (.torchxconfig), and
/// its checkpoint directory made absolute: a driver that builds a child later, from another
/// process, submits what the launch checked.
Result<ChildPolicy> ResolveChildPolicy(runner::Runner& runner, const config::TorchxConfig& config, ChildPolicy p);

/// The dry run a composite records and submits (through its Runner) for child `child` run as a
/// managed job: `app` on `scheduler` with its resolved `cfg` first, then `p`'s failover targets.
/// Scheduler `managed`, its id chosen now and final (a driver that died mid-submit finds it), the
/// run's record as the payload, every target's request as the printed request. `composite_id`
/// names the default checkpoint directory.
Result<schedulers::DryRunInfo> PlanManagedChild(runner::Runner& runner, const config::TorchxConfig& config,
                                                const ChildPolicy& p, specs::AppDef app, const std::string& scheduler,
                                                const specs::Cfg& cfg, const std::string& composite_id,
                                                const std::string& child);

/// The dry run of a child planned by PlanManagedChild, again from its payload (the managed job's
/// record, as a composite's record keeps it): what a composite's driver submits.
Result<schedulers::DryRunInfo> ManagedChildDryRun(const std::string& payload);

/// The `managed:` block that plans such a child again, from its payload (what `describe` of its
/// composite prints): the policy, the failover targets, the composite's checkpoint directory.
Result<ChildPolicy> ChildPolicyOfPayload(const std::string& payload);

/// The kind's planner (composite/launch.h): the document is `app` (the AppDef as a
/// Runner dry run built it), `cfg` (the first target's options, typed) and the keys of a
/// `managed:` block; `-s`/`-cfg` are the first target. Launched
/// through torchx::PlanComposite, the one entry of the CLI's verbs and Python alike.
Result<composite::PlannedComposite> PlanLaunch(runner::Runner& runner, const config::TorchxConfig& config,
                                               const composite::LaunchRequest& request);

/// Registers the "managed" scheduler (at the composition root, beside the built-ins).
void RegisterManagedScheduler(plugins::PluginRegistry& registry);

/// The body of `torchx-composite-driver <state_dir> <id> managed`: watches and recovers the run
/// until it ends. `ready_fd` is written once the driver holds the run's lock.
int RunManagedDriver(plugins::PluginRegistry& registry, const std::string& state_dir, const std::string& id,
                     int ready_fd);

/// `torchx describe managed://...`: the app, where it may run, how it recovers, and every attempt
/// (its handle, why it was made, how it ended), as YAML or JSON.
Result<std::string> ManagedDefinition(runner::Runner& runner, const std::string& handle, bool json);

}  // namespace torchx::managed
