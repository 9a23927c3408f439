// The scheduler interface every back-end implements (local processes, Slurm, containers,
// Kubernetes...), and what a back-end is built from (SchedulerContext, SchedulerEntry).
//
// Request building is split from sending (non-virtual interface): SubmitDryRun builds a printable
// request from options resolved against the back-end's runopts (specs::ResolvedCfg) without
// touching the engine; Schedule sends it. Cancel is idempotent. Optional operations (logs, list,
// delete, workspaces, native dependencies...) are declared in capabilities(), which the Runner
// checks before calling them; their default bodies return kUnimplemented naming the back-end.
//
// Thread-safety: a Scheduler instance is used from one thread at a time (a Runner shared by
// threads gives each its own instance where instance_per_thread() allows). Every call that takes
// an app_id works from any process: state lives in the engine (or, for local_cwd, on disk).
#pragma once

#include <chrono>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torchx/clock.h"
#include "torchx/devices/device.h"
#include "torchx/schedulers/failure_cause.h"
#include "torchx/schedulers/hosts.h"
#include "torchx/schedulers/stacks.h"
#include "torchx/schedulers/usage.h"
#include "torchx/specs/app_def.h"
#include "torchx/specs/app_state.h"
#include "torchx/specs/runopts.h"
#include "torchx/status.h"

namespace torchx::schedulers {

/// What SubmitDryRun builds: everything Schedule needs, and a printable form of the request.
struct DryRunInfo {
  std::string scheduler;  ///< back-end name, e.g. "local_cwd"
  specs::AppDef app;      ///< the app as it will be submitted (env injected by the runner)
  specs::Cfg cfg;         ///< resolved scheduler options
  std::string app_id;     ///< chosen at dry-run time where the back-end allows it
  /// Schedule submits under exactly `app_id`, so a caller that lost track of a submission (a
  /// managed job's driver that died mid-submit) can tell by it whether it happened. False where
  /// the id is a proposal the engine may not keep (plugins) or is chosen at submission.
  bool app_id_is_final = false;
  /// Set by a caller that may lose track of this submission before it learns its id (a composite's
  /// driver killed mid-submit), where the id is chosen only at submission: a back-end with
  /// Capability::kFindsSubmission tags the submission with it (Slurm: in the job's comment), and
  /// FindSubmission finds the app by it. Not part of the printed request.
  std::string submission_key;
  std::string request;  ///< printable request (argv/env per replica, sbatch script, YAML)
  std::string payload;  ///< back-end specific serialized request for Schedule
};

/// One app of a composite app (Capability::kComposite: a pipeline's step), named after its place
/// in it. The views nest members under their composite (list, the dashboard) and draw the graph
/// their `depends_on` makes.
struct MemberApp {
  std::string name;        ///< the step's name
  std::string app_handle;  ///< its own app's handle; empty until submitted
  std::string scheduler;   ///< where it runs
  specs::AppState state = specs::AppState::kUnsubmitted;
  std::vector<std::string> depends_on;  ///< members that must succeed first
  std::optional<double> submitted;      ///< epoch seconds
  std::optional<double> ended;          ///< epoch seconds; nullopt while it runs or waits
  std::string msg;                      ///< "waiting for ...", "not run: ...", why it failed
  std::optional<specs::AppDef> app;     ///< as it will be (or was) submitted
  std::string cfg_json;                 ///< its scheduler options (a JSON object), "{}" for none
};

/// The JSON object every view shares for a member (CLI `list --json`, REST): {name, app_handle,
/// scheduler, state, depends_on, submitted, ended, msg}; a missing time is null. No AppDef.
std::string MemberAppToJson(const MemberApp& member);

struct DescribeAppResponse {
  std::string app_id;
  specs::AppState state = specs::AppState::kUnsubmitted;
  int num_restarts = 0;
  std::string msg;
  std::string structured_error_msg = "<NONE>";
  std::optional<std::string> ui_url;
  std::vector<specs::RoleStatus> roles_statuses;
  /// The app as submitted, when the back-end keeps it.
  std::optional<specs::AppDef> app;
  /// A composite app's members, in their order; empty for any other app.
  std::vector<MemberApp> members = {};
};

struct ListAppResponse {
  std::string app_id;
  specs::AppState state = specs::AppState::kUnknown;
  std::string app_handle;
  std::string name;
  /// When the app was submitted (epoch seconds), where the back-end's listing says it cheaply.
  std::optional<double> created = {};
  /// Restarts so far, where the listing says it cheaply (the dashboard's apps page shows both).
  std::optional<int> num_restarts = {};
  /// When it ended (epoch seconds), where the listing says it cheaply; nullopt while it runs.
  std::optional<double> ended = {};
  /// Who submitted it, where the back-end knows; empty otherwise.
  std::string user = {};
  /// Why a failed app failed (its message), where the listing has it; empty otherwise.
  std::string reason = {};
  /// A composite app's members (without `app`), where the listing has them.
  std::vector<MemberApp> members = {};
};

/// One run of a replica, for the retry history: when it started and ended and how.
struct ReplicaAttempt {
  std::string role;
  int replica_id = 0;
  int attempt = 0;  ///< 0 for the first run, then one more per restart
  specs::AppState state = specs::AppState::kUnknown;
  std::optional<int> exit_code;
  double started = 0;           ///< epoch seconds
  std::optional<double> ended;  ///< nullopt while it runs
};

enum class LogStream { kStdout, kStderr, kCombined };
/// "stdout" / "stderr" / "combined"; the error lists the choices.
Result<LogStream> ParseLogStream(std::string_view s);

struct LogOptions {
  std::string role;
  int replica = 0;
  std::optional<std::string> regex;  ///< keep lines matching (search semantics)
  std::optional<double> since;       ///< epoch seconds; back-ends without timestamps ignore it
  std::optional<double> until;
  bool follow = false;  ///< keep reading until the app is terminal
  LogStream stream = LogStream::kCombined;
  /// Only the last N lines there are now (then, following, the new ones): applied by the Runner
  /// for every back-end, after `regex`; back-ends never see it.
  std::optional<size_t> last_lines;
  /// An earlier run of the replica (its retry history, 0 = the first); nullopt: the latest. Only
  /// back-ends with Capability::kAttemptHistory keep them (the Runner refuses it elsewhere).
  std::optional<int> attempt;
  /// A composite's own log, its driver's (Capability::kComposite; the Runner refuses it
  /// elsewhere), instead of a member's: `role` and `replica` are not read.
  bool driver = false;
};

/// Yields log lines (each with its trailing newline, if it had one).
class LogIterator {
 public:
  virtual ~LogIterator() = default;
  /// The next line; nullopt at the end. Blocks while following a live app.
  virtual Result<std::optional<std::string>> Next() = 0;
  /// Whether Next() would return without blocking. Callers buffer output while this holds and
  /// flush before a call that may wait. Default: true (back-ends that never block).
  virtual bool Ready() { return true; }
  /// Hands `sink` at least one line, and every further line readable without blocking (views
  /// valid only during the call; newlines as Next() keeps them); blocks as Next() does while none
  /// is. false at the end. Default: one Next(); back-ends that read in bulk hand out views of
  /// their buffer instead, so a large log costs no string per line.
  virtual Result<bool> NextBatch(const std::function<void(std::string_view)>& sink);
  /// As NextBatch, but `sink` may get several whole lines in one view (each ending with '\n';
  /// a line without it, the log's last or a piece of an over-long one, comes alone). Readers that print every line
  /// (`torchx log`) take a block at a time instead of a call per line. Default: NextBatch, a line per view.
  virtual Result<bool> NextBlock(const std::function<void(std::string_view)>& sink) { return NextBatch(sink); }
};

/// A LogIterator over lines already read (back-ends that fetch a log whole).
std::unique_ptr<LogIterator> MakeLinesIterator(std::vector<std::string> lines);

/// What a back-end can do beyond the calls every back-end answers (dry run, schedule, describe,
/// cancel). The layers above read these instead of naming back-ends: the Runner refuses an
/// operation a back-end lacks with kUnimplemented naming both, pipelines hand dependencies to a
/// back-end that sequences them natively, the dashboard shows what applies. docs/architecture.md
/// ("Capabilities") says for each whether it is fixed per back-end or depends on the running
/// engine, and which feature reads it.
enum class Capability : unsigned {
  kLogs,                   ///< LogIter
  kFollowLogs,             ///< LogIter with follow: blocks for new lines until the app ends
  kLogTimestamps,          ///< LogIter honours since/until
  kList,                   ///< List
  kDelete,                 ///< Delete
  kWorkspace,              ///< BuildWorkspace
  kAttemptHistory,         ///< Attempts: every run of every replica
  kNativeDependencies,     ///< DependencyCfg: the engine starts a job after others succeed
  kNativeArrays,           ///< one submission for N indexed tasks
  kResourceUsage,          ///< per-replica resource samples
  kFailureClassification,  ///< why an app failed: node loss, preemption, time limit, user error
  kDescribeNative,         ///< the engine's own description of an app
  kInterruptCancels,       ///< its apps run on this host: a launcher interrupted while waiting on one cancels it
  kFindsSubmission,        ///< FindSubmission: an app found by the DryRunInfo::submission_key it was submitted with
  kComposite,              ///< answers for composite jobs (pipelines); takes no AppDef of its own
  kStacks,                 ///< DumpStacks, Profile: a live app's processes' Python stacks (torchx debug)
  kHosts,                  ///< Hosts: the nodes it runs apps on, their capacity and the user's apps there
};
inline constexpr unsigned kCapabilityCount = static_cast<unsigned>(Capability::kHosts) + 1;

/// The capability's name in docs, JSON and Python ("logs", "follow_logs", ...).
std::string_view CapabilityName(Capability c);
/// What it is in words, for "scheduler X does not support <this>" ("following logs", ...).
std::string_view CapabilityDescription(Capability c);

/// A set of Capability; a value type.
class Capabilities {
 public:
  constexpr Capabilities() = default;
  constexpr Capabilities(std::initializer_list<Capability> caps) {
    for (Capability c : caps) bits_ |= Bit(c);
  }
  constexpr bool Has(Capability c) const { return (bits_ & Bit(c)) != 0; }
  constexpr Capabilities With(Capability c) const {
    Capabilities out = *this;
    out.bits_ |= Bit(c);
    return out;
  }
  constexpr Capabilities Without(Capability c) const {
    Capabilities out = *this;
    out.bits_ &= ~Bit(c);
    return out;
  }
  /// The members, in enum order.
  std::vector<Capability> List() const;
  friend constexpr bool operator==(Capabilities a, Capabilities b) { return a.bits_ == b.bits_; }

 private:
  static constexpr unsigned Bit(Capability c) { return 1u << static_cast<unsigned>(c); }
  unsigned bits_ = 0;
};

class Scheduler {
 public:
  Scheduler(std::string backend, std::string session_name)
      : backend_(std::move(backend)), session_name_(std::move(session_name)) {}
  virtual ~Scheduler() = default;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  const std::string& backend() const { return backend_; }
  const std::string& session_name() const { return session_name_; }

  /// The options this back-end accepts (`torchx runopts <name>`).
  virtual specs::RunOpts run_opts() const = 0;
  /// What this back-end can do beyond the required calls. Default: none.
  virtual Capabilities capabilities() const { return {}; }
  /// Whether every role needs a resource (the Runner checks before the dry run, as TorchX's
  /// Scheduler._validate): true but for back-ends that ignore resources (local processes).
  virtual bool requires_resources() const { return true; }
  /// Whether LogIter is given LogOptions.regex and keeps only the matching lines itself (a Python
  /// scheduler object: TorchX's log_iter takes the pattern); false: the Runner filters the lines.
  virtual bool applies_log_filter() const { return false; }
  /// Whether the back-end checks apps itself beyond TorchX's Runner's checks (specs::ValidateAppBasics):
  /// a Python scheduler object, whose _validate TorchX calls; false: the Runner applies
  /// specs::ValidateAppDef (names, duplicates, resources, ports).
  virtual bool checks_app_itself() const { return false; }
  /// Whether everything this back-end knows lives outside the instance (in the engine, on disk),
  /// so that a Runner shared by threads may build one instance per calling thread and no two
  /// threads use one instance at once: true for the built-ins. False (the default: a plugin that
  /// may keep apps in memory): the Runner builds one instance and every thread uses it.
  virtual bool instance_per_thread() const { return false; }

  /// Validates the app for this back-end and builds the request, reading options resolved
  /// against run_opts() (the Runner resolves them once per run). Does not contact the engine.
  Result<DryRunInfo> SubmitDryRun(const specs::AppDef& app, const specs::ResolvedCfg& cfg);
  /// Resolves `cfg` first (kInvalidArgument with TorchX's messages): for callers holding a raw cfg.
  Result<DryRunInfo> SubmitDryRun(const specs::AppDef& app, const specs::Cfg& cfg);

  /// Sends a request built by SubmitDryRun; returns the app id. kUnavailable if the engine
  /// cannot be reached.
  virtual Result<std::string> Schedule(const DryRunInfo& info) = 0;

  /// nullopt when the app does not exist (never existed, or was deleted).
  virtual Result<std::optional<DescribeAppResponse>> Describe(const std::string& app_id) = 0;

  /// Requests cancellation. OK (and nothing done) when the app does not exist or is terminal.
  /// Does not wait for the app to stop. A composite (Capability::kComposite), whose Describe
  /// revives a dead driver that would start the next child, records the cancel first: its
  /// DoCancel is called at once and must itself be a no-op for an ended app (kNotFound for an
  /// unknown one, which this answers OK).
  Status Cancel(const std::string& app_id);

  /// Removes a terminal app's record (and, where the back-end owns them, its logs).
  /// kFailedPrecondition for a live app; kNotFound for an unknown one.
  virtual Status Delete(const std::string& app_id);

  virtual Result<std::vector<ListAppResponse>> List();

  /// Capability::kDescribeNative: the request as the engine now holds it for a submitted app,
  /// the read-side twin of SubmitDryRun (TorchX's describe_native): `request` printable,
  /// `payload` the back-end's structured form (a JSON object), `app` and `cfg` where the back-end
  /// keeps them. nullopt for an unknown app. Default: kUnimplemented naming the back-end.
  virtual Result<std::optional<DryRunInfo>> DescribeNative(const std::string& app_id);

  /// Capability::kComposite: the kind's own documents, which the edges (describe, the dashboard)
  /// ask for by capability, naming no kind. Given the composite's whole handle (its session, which
  /// the documents show, may not be this instance's). CompositeDefinition: what `torchx describe`
  /// prints for it in place of an AppDef (the file that runs it again, or JSON with `json`);
  /// nullopt where the kind has none (a pipeline's steps are its AppDef). CompositeSection: the
  /// kind's section of the dashboard's app page, a JSON object put under the scheduler's name;
  /// nullopt where it has none. Default: nullopt.
  virtual Result<std::optional<std::string>> CompositeDefinition(const std::string& handle, bool json);
  virtual Result<std::optional<std::string>> CompositeSection(const std::string& handle);

  /// Every attempt of every replica, by role, replica and attempt, where the back-end keeps a
  /// history (local_cwd); empty where it does not. kNotFound for an unknown app.
  virtual Result<std::vector<ReplicaAttempt>> Attempts(const std::string& app_id);

  /// Capability::kResourceUsage: the app's replicas' CPU, memory and GPU figures over time (the
  /// samples the engine kept, or one read now where the engine measures on demand). nullopt for
  /// an unknown app. Default: kUnimplemented naming the back-end.
  virtual Result<std::optional<AppUsage>> ResourceUsage(const std::string& app_id, const UsageOptions& options);

  /// Capability::kStacks: what each process of the app's replicas (`options` picks which) is doing
  /// now, one ProcessStack each (with its error where it has no stack). nullopt for an unknown
  /// app; kFailedPrecondition for one that has ended. Default: kUnimplemented naming the back-end.
  virtual Result<std::optional<std::vector<ProcessStack>>> DumpStacks(const std::string& app_id,
                                                                      const StackOptions& options);
  /// Capability::kStacks too: one replica's processes sampled for `options.seconds`, written to
  /// `options.output` as speedscope JSON. kInvalidArgument when `options` matches several
  /// replicas (naming them), kFailedPrecondition for an ended app, kNotFound for an unknown one.
  virtual Status Profile(const std::string& app_id, const ProfileOptions& options);

  /// Capability::kHosts: every host or node this back-end runs apps on, read from the engine now,
  /// with the user's apps on each (their ids; the Runner adds handles). kUnavailable when the
  /// engine cannot be reached. Default: kUnimplemented naming the back-end.
  virtual Result<std::vector<HostInfo>> Hosts();

  virtual Result<std::unique_ptr<LogIterator>> LogIter(const std::string& app_id, const LogOptions& options);

  /// Builds `workspace` (a local directory) into what the app runs, updating its roles (an
  /// image patched with the directory, or a copy the roles start in). Capability::kWorkspace.
  /// Default: kUnimplemented naming the back-end.
  virtual Status BuildWorkspace(const std::string& workspace, specs::AppDef& app, const specs::ResolvedCfg& cfg);

  /// Capability::kNativeDependencies: `cfg` with what makes the engine start this submission
  /// only once every app in `after_app_ids` (ids on this back-end) has succeeded, and end it
  /// (CANCELLED) once one of them cannot. Options already in `cfg` are kept (a dependency the user
  /// gave is combined with these). Default: kUnimplemented ("not native"): the caller sequences
  /// the submissions itself.
  virtual Result<specs::Cfg> DependencyCfg(const std::vector<std::string>& after_app_ids, specs::Cfg cfg) const;

  /// Capability::kNativeArrays: submits `tasks` (dry runs on this back-end, each of one role with
  /// one replica) as one array job, of which the engine runs at most `max_parallel` at once (0: no
  /// limit). Returns each task's app id, in order. kInvalidArgument naming the task when the
  /// tasks cannot be one array (several replicas, different resources or options). Default:
  /// kUnimplemented: the caller submits the tasks one by one.
  virtual Result<std::vector<std::string>> ScheduleArray(const std::vector<DryRunInfo>& tasks, int max_parallel);

  /// Capability::kFailureClassification: why an ended app did not succeed, from what the engine
  /// reports (a pure, table-tested function of its states per back-end). nullopt for an unknown
  /// app; kFailedPrecondition for one that is not terminal or succeeded. Default: kUnimplemented.
  virtual Result<std::optional<FailureReport>> ClassifyFailure(const std::string& app_id);

  /// Capability::kFindsSubmission: the id of the app submitted with DryRunInfo::submission_key
  /// `key`, nullopt where the engine knows none (any more: an engine forgets ended jobs after a
  /// while, which kFindableForSeconds bounds).
  virtual Result<std::optional<std::string>> FindSubmission(const std::string& key);
  /// How long after a submission FindSubmission still finds it, whatever became of it (an ended
  /// job included); 0 where the back-end cannot say (then "not found" proves nothing).
  virtual Result<double> FindableForSeconds() { return 0.0; }

  /// `cfg` for a submission whose infrastructure failures its caller recovers with a new
  /// submission (a managed job): the engine ends the app on a node failure or preemption (and says
  /// why) instead of restarting it under the same id. kInvalidArgument when the app's own options
  /// cannot be kept that way. Default: `cfg` as it is (the engine never restarts on its own).
  virtual Result<specs::Cfg> RecoveryHandoverCfg(specs::Cfg cfg) const;

  /// Pure helpers this back-end offers its TorchX Python class (a request's script, a state
  /// table, manifest pieces): a named function, JSON text in and out, no engine contact. The
  /// Python binding reaches back-ends only through this and the registry, so any back-end may be
  /// linked in or loaded. kInvalidArgument naming what is wrong with `args_json`; kNotFound
  /// naming the helpers there are. Default: none.
  virtual Result<std::string> Helper(std::string_view function, std::string_view args_json);

  /// Where the engine can notify: blocks until the app may have changed state, or `max_wait`
  /// passes, and returns true. The default returns false at once: the caller (Runner::Wait) then
  /// waits on its clock.
  virtual bool WaitForUpdate(const std::string& app_id, std::chrono::milliseconds max_wait);
  /// WaitForUpdate for several apps: wakes when any of them may have changed (a sweep's running
  /// trials). Default: one app's WaitForUpdate; several, none (false: the caller sleeps).
  virtual bool WaitForAnyUpdate(const std::vector<std::string>& app_ids, std::chrono::milliseconds max_wait);

 protected:
  /// Builds the request; info.cfg and info.scheduler are filled by SubmitDryRun.
  virtual Result<DryRunInfo> DoDryRun(const specs::AppDef& app, const specs::ResolvedCfg& cfg) = 0;
  /// REQUIRES: the app exists and is not terminal (a composite's: see Cancel).
  virtual Status DoCancel(const std::string& app_id) = 0;
  Status Unsupported(std::string_view what) const;

 private:
  /// SubmitDryRun once `cfg` is known to be resolved against run_opts().
  Result<DryRunInfo> SubmitResolved(const specs::AppDef& app, const specs::ResolvedCfg& cfg);

  std::string backend_;
  std::string session_name_;
};

/// What a back-end is built with: the runner's session and the host's services it may use. The
/// Runner builds it from the plugin registry; a test builds one with exactly what it needs.
struct SchedulerContext {
  std::string session_name = "torchx";
  /// Device plugins, for back-ends that place replicas on accelerators (local_cwd's `device`
  /// option). Null: none registered.
  const devices::DeviceSource* devices = nullptr;
  /// What the back-end waits on (following logs, retrying an engine). Null: real time.
  std::shared_ptr<const Clock> clock;
  /// The scheduler's section of the caller's .torchxconfig, key -> text as written: options a
  /// back-end reads for every call, not only a run's (slurm's status_interval).
  std::map<std::string, std::string, std::less<>> settings;
};

/// Builds a scheduler for a context.
using SchedulerFactory = std::function<Result<std::unique_ptr<Scheduler>>(const SchedulerContext& context)>;

/// One name a back-end answers to. Each back-end exports the list of its entries
/// (`BackendSchedulers()` in its own namespace); the build's table of linked-in back-ends
/// (plugins/builtin_backends.cc, generated by CMake) hands them to the registry. Adding a back-end
/// touches neither this file nor the registry.
struct SchedulerEntry {
  std::string name;
  SchedulerFactory factory;
};

}  // namespace torchx::schedulers
