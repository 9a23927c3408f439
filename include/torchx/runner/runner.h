// Runner: the one API the CLI and the Python package call. It turns an AppDef or a component
// into a submitted app on a scheduler, and answers status / wait / cancel / delete / describe /
// logs / list by app handle (`scheduler://session/app_id`) from any process.
//
// TorchX semantics kept: dryrun validates the app and injects TORCHX_JOB_ID (with the ${app_id}
// macro) and TORCHX_INTERNAL_SESSION_ID into every role's env; status of an unknown app is
// nullopt, not an error; cancel of a missing or terminal app does nothing; the session part of a
// handle is not used to find the app. Schedulers are created lazily, one per name.
//
// The Runner is the one place that resolves names: schedulers, components (and their help),
// named resources and devices, all through the plugin registry it is given (built at the
// composition root: the CLI's main, the Python module). Back-ends and components are handed the
// registry's lookup views, never the registry.
//
// Thread-safety: a Runner may be shared by threads (Ax's thread pool around one runner). Each
// thread gets its own instance of a back-end that allows it (Scheduler::instance_per_thread: the
// built-ins, whose state is in the engine or on disk; a local_cwd instance owns a store
// connection, which is one thread's), made on the thread's first call; when the thread exits it
// is kept, idle (a log it made may still be read), for the next new thread to take over, and
// dropped with the Runner. Other back-ends have one instance for all threads. The registry may
// be shared.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "torchx/clock.h"
#include "torchx/components/component.h"
#include "torchx/plugins/registry.h"
#include "torchx/schedulers/scheduler.h"
#include "torchx/specs/app_def.h"
#include "torchx/specs/app_state.h"
#include "torchx/specs/tracking.h"
#include "torchx/status.h"

namespace torchx::runner {

/// The last lines a failed replica wrote: why it failed, for `run --wait`, `status` and the
/// dashboard.
struct ReplicaLogTail {
  std::string role;
  int replica_id = 0;
  std::string stream;              ///< "stderr", or "combined" where the back-end keeps one log
  std::vector<std::string> lines;  ///< without their newlines, each at most kMaxTailLineBytes
  static constexpr size_t kMaxTailLineBytes = 1000;
};

struct RunnerOptions {
  std::string session_name = "torchx";  ///< Default: "torchx" (TorchX deprecated custom names)
  /// Extra component parameter defaults, keyed by component name (like `[component:<name>]`).
  std::map<std::string, components::ConfigDefaults> component_defaults;
  /// What Wait (and the back-ends this Runner builds) read the time and sleep with. Null: real time.
  std::shared_ptr<const Clock> clock;
  /// The tracker run this launch belongs to and the trackers every job sets up (specs::TrackingEnv
  /// says what each role gets; config::ConfiguredTracking reads them as TorchX does).
  specs::Tracking tracking;
  /// The schedulers this Runner alone knows, by name, in place of the registry's (TorchX's
  /// Runner(scheduler_factories=...): Python's Runner given scheduler objects). nullopt: the
  /// registry's; an empty map: none.
  std::optional<std::map<std::string, schedulers::SchedulerFactory>> schedulers;
  /// Each scheduler's .torchxconfig section (SchedulerContext::settings), by scheduler name.
  std::map<std::string, std::map<std::string, std::string, std::less<>>> scheduler_settings;
  /// A limit on each call into a Python component file (`path.py:fn`, `pkg.module:fn`): its
  /// module runs at import and may never return. nullopt: none (the CLI; the dashboard sets one).
  std::optional<std::chrono::milliseconds> component_load_timeout;
};

class Runner {
 public:
  /// `registry` must outlive the Runner.
  explicit Runner(plugins::PluginRegistry& registry, RunnerOptions options = {});
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;
  /// Where a Runner keeps the scheduler instances it made, by thread where the back-end allows
  /// (runner.cc; public only so that a thread's exit can hand its instances back).
  struct SchedulerCache;

  /// Resolves `cfg` against the scheduler's runopts (kInvalidArgument with TorchX's messages;
  /// kNotFound for an unknown scheduler). A run resolves once: what this returns goes to DryRun.
  Result<specs::ResolvedCfg> ResolveCfg(const std::string& scheduler, const specs::Cfg& cfg);

  /// Validates `app` (kInvalidArgument naming the field), injects TorchX's env and builds the
  /// request with options resolved for `scheduler` by ResolveCfg (kInvalidArgument for options
  /// resolved against another scheduler's). kNotFound for an unknown scheduler. `workspace`: a
  /// local directory the scheduler builds into the app first (see Scheduler::BuildWorkspace);
  /// empty for none.
  Result<schedulers::DryRunInfo> DryRun(specs::AppDef app, const std::string& scheduler, const specs::ResolvedCfg& cfg,
                                        const std::string& workspace = {});
  /// ResolveCfg, then the above.
  Result<schedulers::DryRunInfo> DryRun(specs::AppDef app, const std::string& scheduler, const specs::Cfg& cfg = {},
                                        const std::string& workspace = {});
  /// The first with `tracking` for this launch instead of RunnerOptions.tracking (Python's
  /// Runner.dryrun takes the parent run per call and reads the trackers on every call, as TorchX).
  Result<schedulers::DryRunInfo> DryRun(specs::AppDef app, const std::string& scheduler, const specs::ResolvedCfg& cfg,
                                        const std::string& workspace, const specs::Tracking& tracking);
  /// The back-end's own request for `app` as given, `cfg` resolved against its options: no app
  /// validation and no injected env (the caller ran TorchX's template: Python scheduler classes
  /// that present a core back-end's request as TorchX's objects).
  Result<schedulers::DryRunInfo> BackendDryRun(const std::string& scheduler, const specs::AppDef& app,
                                               const specs::Cfg& cfg);
  /// Submits a dry-run result; returns the app handle.
  Result<std::string> Schedule(const schedulers::DryRunInfo& info);
  /// DryRun + Schedule.
  Result<std::string> Run(specs::AppDef app, const std::string& scheduler, const specs::Cfg& cfg = {});

  /// Resolves a component (builtin, declarative file, spec file), parses its CLI-style `args`
  /// (defaults from RunnerOptions.component_defaults) and dry-runs it.
  Result<schedulers::DryRunInfo> DryRunComponent(const std::string& component, const std::vector<std::string>& args,
                                                 const std::string& scheduler, const specs::Cfg& cfg = {},
                                                 const std::string& workspace = {});
  Result<std::string> RunComponent(const std::string& component, const std::vector<std::string>& args,
                                   const std::string& scheduler, const specs::Cfg& cfg = {});

  /// The AppDef a component builds from CLI-style `args` (defaults as DryRunComponent).
  Result<specs::AppDef> ComponentAppDef(const std::string& component, const std::vector<std::string>& args);
  /// The same from a JSON object of typed arguments (TorchX's run_component(dict)).
  Result<specs::AppDef> ComponentAppDefFromJson(const std::string& component, std::string_view args_json);

  /// nullopt when the app is unknown to its scheduler. kInvalidArgument for a malformed handle.
  Result<std::optional<specs::AppStatus>> Status(const std::string& handle);
  /// Waits until terminal (or `timeout`, then kDeadlineExceeded): woken by the scheduler where it
  /// can notify (a local store: at once), else re-checking every `interval` (slept on the clock).
  /// nullopt if the app disappears.
  Result<std::optional<specs::AppStatus>> Wait(const std::string& handle,
                                               std::chrono::milliseconds interval = std::chrono::milliseconds(200),
                                               std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  /// Blocks until the app may have changed (the scheduler can notify), at most `max_wait`.
  /// Returns whether the app's scheduler waited on its own notice of a change (true), or the
  /// clock slept `max_wait` for it (false: the caller learns that polling is all there is).
  bool WaitForUpdate(const std::string& handle, std::chrono::milliseconds max_wait);
  /// WaitForUpdate for several apps, woken by whichever changes first where they share a
  /// scheduler that can wait on several (local_cwd); else it sleeps `max_wait` and returns false.
  bool WaitForAnyUpdate(const std::vector<std::string>& handles, std::chrono::milliseconds max_wait);
  /// Requests cancellation; returns at once. No-op for missing or terminal apps.
  ::torchx::Status Cancel(const std::string& handle);
  /// TorchX's deprecated alias of Cancel (Ax calls it).
  ::torchx::Status Stop(const std::string& handle) { return Cancel(handle); }
  /// What RequestCancel found: no such app, an app that had ended already (`state` is how), or a
  /// cancel requested (`state` is the app's state after the request).
  struct CancelOutcome {
    enum class Kind { kNotFound, kAlreadyEnded, kRequested };
    Kind kind = Kind::kNotFound;
    specs::AppState state = specs::AppState::kUnknown;
  };
  /// Cancel, telling the caller (`torchx cancel`, the dashboard) what it found. A composite's
  /// cancel is recorded before its state is read: reading it first would revive a dead driver,
  /// which starts the next child before the cancel is seen.
  Result<CancelOutcome> RequestCancel(const std::string& handle);
  /// Removes a terminal app (record and logs). kFailedPrecondition while it runs; kUnimplemented
  /// for a scheduler that cannot delete.
  ::torchx::Status Delete(const std::string& handle);
  /// The app as submitted; nullopt when unknown.
  Result<std::optional<specs::AppDef>> Describe(const std::string& handle);
  /// A composite app's members (a pipeline's steps: handles, states, depends_on, times, AppDefs),
  /// in order; nullopt for an unknown composite. Any other app: an empty list, its scheduler not
  /// asked.
  Result<std::optional<std::vector<schedulers::MemberApp>>> Members(const std::string& handle);
  /// The request as the engine now holds it (Scheduler::DescribeNative), with `scheduler` set;
  /// nullopt when unknown. kUnimplemented for a back-end without Capability::kDescribeNative.
  Result<std::optional<schedulers::DryRunInfo>> DescribeNative(const std::string& handle);
  /// A composite's definition and dashboard section (Scheduler::CompositeDefinition and
  /// CompositeSection); nullopt for an app of a scheduler that is no composite, or has none.
  Result<std::optional<std::string>> CompositeDefinition(const std::string& handle, bool json);
  Result<std::optional<std::string>> CompositeSection(const std::string& handle);
  /// Lines of one replica's log, kept by `options.regex` when given (schedulers::LineFilter, the
  /// same for every back-end). kNotFound for an unknown app, or a role not in the app (the
  /// message lists the roles); kInvalidArgument for a bad pattern; kUnimplemented when the
  /// scheduler has no logs, or cannot follow them and `options.follow` is set.
  Result<std::unique_ptr<schedulers::LogIterator>> LogLines(const std::string& handle,
                                                            const schedulers::LogOptions& options);
  /// Every attempt of every replica where the scheduler keeps a history (attempt_history), else empty.
  /// kNotFound for an unknown app.
  Result<std::vector<schedulers::ReplicaAttempt>> Attempts(const std::string& handle);
  /// The last `lines` lines of each failed replica's stderr (its combined log where the back-end
  /// keeps no stderr of its own); every replica's when the app failed but none is marked failed.
  /// Empty for an app that did not fail, or a back-end without logs. nullopt for an unknown app.
  Result<std::optional<std::vector<ReplicaLogTail>>> FailureTails(const std::string& handle, size_t lines = 20);
  /// The replicas' CPU, memory and GPU figures over time (Scheduler::ResourceUsage); nullopt when
  /// the app is unknown. kUnimplemented for a scheduler without Capability::kResourceUsage.
  /// Each process of the app's replicas and its Python stacks now (Scheduler::DumpStacks); nullopt
  /// when the app is unknown. kUnimplemented for a scheduler without Capability::kStacks.
  Result<std::optional<std::vector<schedulers::ProcessStack>>> DumpStacks(const std::string& handle,
                                                                          const schedulers::StackOptions& options);
  /// One replica's CPU profile written to `options.output` (Scheduler::Profile).
  ::torchx::Status Profile(const std::string& handle, const schedulers::ProfileOptions& options);
  Result<std::optional<schedulers::AppUsage>> ResourceUsage(const std::string& handle,
                                                            const schedulers::UsageOptions& options = {});
  /// Apps the scheduler knows, with handles filled in. kUnimplemented for a scheduler that cannot
  /// list.
  Result<std::vector<schedulers::ListAppResponse>> List(const std::string& scheduler);
  /// The hosts the scheduler runs apps on, with handles of the apps there filled in
  /// (Scheduler::Hosts). kUnimplemented for a scheduler without Capability::kHosts.
  Result<std::vector<schedulers::HostInfo>> Hosts(const std::string& scheduler);

  /// kNotFound (listing the schedulers, "did you mean") for an unknown scheduler.
  Result<specs::RunOpts> SchedulerRunOpts(const std::string& scheduler);
  /// A back-end's pure helper (Scheduler::Helper): JSON text in and out. kNotFound as
  /// SchedulerRunOpts, or for a helper the back-end lacks.
  Result<std::string> SchedulerHelper(const std::string& scheduler, std::string_view function,
                                      std::string_view args_json);
  /// What `scheduler` can do (schedulers::Capability); kNotFound as SchedulerRunOpts.
  Result<schedulers::Capabilities> SchedulerCapabilities(const std::string& scheduler);
  /// `cfg` for a submission to `scheduler` that the engine starts only once every app in
  /// `after_handles` has succeeded (Scheduler::DependencyCfg). kUnimplemented when the scheduler
  /// cannot sequence natively (Capability::kNativeDependencies): the caller sequences instead;
  /// kInvalidArgument for a handle of another scheduler or a malformed one.
  Result<specs::Cfg> DependencyCfg(const std::string& scheduler, const std::vector<std::string>& after_handles,
                                   specs::Cfg cfg);
  /// Why an ended app did not succeed (Scheduler::ClassifyFailure). A back-end without
  /// Capability::kFailureClassification is answered from its status: CANCELLED is `cancelled`,
  /// FAILED `unknown` (with the app's message). nullopt for an unknown app; kFailedPrecondition for
  /// one that has not ended or succeeded.
  Result<std::optional<schedulers::FailureReport>> ClassifyFailure(const std::string& handle);
  /// Where `scheduler` has Capability::kFindsSubmission: the handle of the app submitted there
  /// with DryRunInfo::submission_key `key`, nullopt where it knows none. Where it does not:
  /// kUnimplemented. With it, how long after a submission it is still found
  /// (Scheduler::FindableForSeconds).
  Result<std::optional<std::string>> FindSubmission(const std::string& scheduler, const std::string& key);
  Result<double> FindableForSeconds(const std::string& scheduler);
  /// `cfg` for a submission whose infrastructure failures the caller recovers itself
  /// (Scheduler::RecoveryHandoverCfg): managed jobs.
  Result<specs::Cfg> RecoveryHandoverCfg(const std::string& scheduler, specs::Cfg cfg);
  /// Submits `tasks` (dry runs, all on one scheduler) as one array job running at most
  /// `max_parallel` at once (Scheduler::ScheduleArray); returns each task's handle, in order.
  /// kUnimplemented when the scheduler has no arrays (Capability::kNativeArrays).
  Result<std::vector<std::string>> ScheduleArray(const std::vector<schedulers::DryRunInfo>& tasks, int max_parallel);
  /// Every scheduler: built-ins in the build's order (the default first), then plugins.
  std::vector<std::string> SchedulerBackends() const;
  /// Where an app goes when no scheduler is named: the registry's DefaultScheduler (the first
  /// plugin scheduler, else the built-in default); the built-in default for a Runner given its
  /// own schedulers.
  std::string DefaultScheduler() const;
  const std::string& session_name() const { return options_.session_name; }

  /// A component by what `torchx run` takes: a registered name (builtin or plugin), a
  /// declarative or spec file, or a Python `file.py:fn` / `module:fn`.
  Result<std::shared_ptr<const components::Component>> Component(const std::string& name);
  /// `torchx run <component> --help`.
  Result<std::string> ComponentHelp(const std::string& name);
  /// Registered components (builtins and plugins), sorted.
  std::vector<std::string> ComponentNames() const;

  /// A named resource: the built-in tables, then plugins (kNotFound with "did you mean").
  Result<specs::Resource> NamedResource(const std::string& name) const;
  std::vector<std::string> NamedResourceNames() const;

  /// What components are built with: the registry's named resources and devices.
  components::BuildContext build_context() const;

 private:
  /// DryRun once the app is valid.
  Result<schedulers::DryRunInfo> DryRunValidated(specs::AppDef app, const std::string& scheduler,
                                                 const specs::ResolvedCfg& cfg, const std::string& workspace,
                                                 const specs::Tracking& tracking);
  Result<schedulers::Scheduler*> GetScheduler(const std::string& name);
  /// specs::ValidateAppDef, or only ValidateAppBasics for a back-end that checks apps itself.
  ::torchx::Status ValidateApp(const specs::AppDef& app, const std::string& scheduler);
  const components::ConfigDefaults& DefaultsFor(const std::string& component) const;
  Result<std::pair<schedulers::Scheduler*, std::string>> SchedulerFor(const std::string& handle);

  plugins::PluginRegistry& registry_;
  RunnerOptions options_;
  std::shared_ptr<const Clock> clock_;
  std::shared_ptr<SchedulerCache> schedulers_;
};

/// How the message of the kNotFound for an unknown scheduler starts (the name follows, in
/// backticks): the Python binding raises TorchX's UnknownSchedulerException for it.
inline constexpr std::string_view kUnknownSchedulerMessage = "scheduler: unknown scheduler `";
/// How LogLines' kNotFound for an app its scheduler does not know starts (TorchX's
/// UnknownAppException in Python).
inline constexpr std::string_view kUnknownAppLogMessage = "log: app ";

/// The id TorchX gives a runner process (TORCHX_INTERNAL_SESSION_ID, or a new UUID).
std::string RunnerSessionId();

}  // namespace torchx::runner
