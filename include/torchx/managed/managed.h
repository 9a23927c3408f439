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

/// `--recover_on` values: each a cause name (user_error, time_limit, out_of_memory, unknown, ...)
/// added to the defaults. kInvalidArgument naming the value and the choices; `cancelled` is refused
/// (a cancel is a person's decision).
Result<Policy> PolicyWith(int max_recoveries, const std::vector<std::string>& recover_on,
                          std::optional<std::string> start_timeout);

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
