#include "schedulers/local/local_scheduler.h"

#include "schedulers/local/failure_cause.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <string_view>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "core/helper_exe.h"
#include "core/state_dir.h"
#include "schedulers/local/app_plan.h"
#include "schedulers/local/detached_start.h"
#include "schedulers/local/end_summary.h"
#include "schedulers/local/failure_cause.h"
#include "schedulers/local/helpers.h"
#include "schedulers/local/process_identity.h"
#include "schedulers/local/replica_logs.h"
#include "schedulers/local/this_host.h"
#include "schedulers/log_file_reader.h"
#include "schedulers/py_spy.h"
#include "torchx/specs/app_id.h"
#include "torchx/specs/serialize.h"

namespace torchx::schedulers::local {
namespace {

namespace fs = std::filesystem;
using specs::AppState;

// The state dir a dry run recorded (every local DryRunInfo has one; Python may hand back its own).
std::string RecordedStateDir(const specs::Cfg& cfg) {
  auto it = cfg.find("state_dir");
  const auto* s = it == cfg.end() ? nullptr : std::get_if<std::string>(&it->second);
  return s ? *s : "";
}

const char* kHostname = "localhost";

}  // namespace

Result<std::string> FindSupervisor() {
#ifdef TORCHX_SUPERVISOR_BUILD_PATH
  const char* build_path = TORCHX_SUPERVISOR_BUILD_PATH;
#else
  const char* build_path = nullptr;
#endif
  auto found = internal::FindHelperExecutable("torchx-supervisor", "TORCHX_SUPERVISOR", build_path);
  if (!found) return FailedPreconditionError("local: " + found.error().message());
  return found;
}

LocalScheduler::LocalScheduler(std::string backend, std::string session_name, std::string default_state_dir,
                               const devices::DeviceSource* devices, std::shared_ptr<ProcessStarter> starter)
    : Scheduler(std::move(backend), std::move(session_name)),
      default_state_dir_(std::move(default_state_dir)),
      devices_(devices),
      starter_(starter ? std::move(starter) : OsProcessStarter()) {}

specs::RunOpts LocalScheduler::run_opts() const {
  specs::RunOpts o;
  (void)o.Add("log_dir", specs::CfgType::kStr,
              "dir to write the replicas' stdout/stderr logs to (default: <state_dir>/logs)");
  (void)o.Add("prepend_cwd", specs::CfgType::kBool,
              "if set, prepends the working directory to the replicas' PATH, else appends it", false);
  (void)o.Add("auto_set_cuda_visible_devices", specs::CfgType::kBool,
              "sets CUDA_VISIBLE_DEVICES for each replica so that replicas get disjoint GPUs", false);
  (void)o.Add("device", specs::CfgType::kStr,
              "a device plugin (PJRT_DEVICE name, or LIBRARY with $PJRT_LIBRARY_PATH): each replica r of a role's "
              "n gets that device's environment (PJRT_DEVICE, PJRT_LOCAL_PROCESS_RANK/COUNT, ...)");
  (void)o.Add("state_dir", specs::CfgType::kStr,
              "where app state is kept (default: $TORCHX_STATE_DIR or ~/.local/state/torchx)");
  (void)o.Add("kill_grace_seconds", specs::CfgType::kFloat,
              "seconds between SIGTERM and SIGKILL when stopping replicas", 10.0);
  (void)o.Add("resource_interval", specs::CfgType::kFloat,
              "seconds between samples of each replica's CPU, memory and GPU use (`torchx status --resources`, "
              "`torchx top`); 0 turns sampling off",
              5.0);
  return o;
}

Result<StateStore*> LocalScheduler::Store(const std::string& state_dir) {
  auto it = stores_.find(state_dir);
  if (it != stores_.end()) return it->second.get();
  TORCHX_ASSIGN_OR_RETURN(auto store, StateStore::Open(state_dir));
  // Checkpoints are the supervisors' (they write the most, off anyone's path): a `run` commits
  // its app without checkpointing the WAL unless it has grown to four times their threshold.
  store->SetWalCheckpointPages(4 * StateStore::kWalCheckpointPages);
  return stores_.emplace(state_dir, std::move(store)).first->second.get();
}

Result<DryRunInfo> LocalScheduler::DoDryRun(const specs::AppDef& app, const specs::ResolvedCfg& cfg) {
  std::string state_dir = cfg.Str("state_dir").value_or("");
  state_dir = state_dir.empty() ? default_state_dir_ : internal::AbsoluteStateDir(state_dir);
  PlanInputs in;
  in.app_id = specs::MakeUnique(app.name);
  in.session = session_name();
  std::error_code ec;
  in.cwd = fs::current_path(ec).string();
  std::string log_dir = cfg.Str("log_dir").value_or("");
  in.log_dir = log_dir.empty() ? (fs::path(state_dir) / "logs").string() : fs::absolute(log_dir, ec).string();
  // Options declared with a default are never None once resolved.
  in.prepend_cwd = cfg.Bool("prepend_cwd").value();
  in.auto_set_cuda_visible_devices = cfg.Bool("auto_set_cuda_visible_devices").value();
  if (in.auto_set_cuda_visible_devices) {
    // The CUDA device plugin's count (the one GPU count); none registered: no GPUs to hand out.
    std::optional<devices::DevicePlugin> cuda = devices_ ? devices_->Find("CUDA") : std::nullopt;
    auto gpus = cuda ? devices::DeviceChipCount(*cuda) : Result<int>(0);
    in.visible_gpus = gpus ? *gpus : 0;
  }
  in.kill_grace_seconds = cfg.Float("kill_grace_seconds").value();
  if (std::string device = cfg.Str("device").value_or(""); !device.empty()) {
    if (!devices_) return InvalidArgumentError(fmt::format("device: `{}`: no device plugins are available", device));
    const char* lib = std::getenv("PJRT_LIBRARY_PATH");
    TORCHX_ASSIGN_OR_RETURN(in.device, devices::SelectDevice(device, lib ? lib : "", *devices_));
    auto chips = devices::DeviceChipCount(*in.device);
    if (!chips) return InvalidArgumentError(fmt::format("device: {}", chips.error().message()));
    in.device_chips = *chips;
  }
  // The supervisor holds up to five fds per replica (two pipes, three log files once output
  // flows) and raises its soft open-file limit to the hard one; leave room for its own files.
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_max != RLIM_INFINITY) {
    in.max_replicas = static_cast<int>(std::min<rlim_t>((lim.rlim_max - 64) / 5, 1 << 30));
  } else {
    in.max_replicas = 1 << 20;
  }
  // nan and inf parse as floats: neither is a time the supervisor's timers can take.
  if (!std::isfinite(in.kill_grace_seconds) || in.kill_grace_seconds < 0) {
    return InvalidArgumentError(
        fmt::format("kill_grace_seconds: must be a finite number >= 0, got {}", in.kill_grace_seconds));
  }
  in.resource_interval = cfg.Float("resource_interval").value();
  if (!std::isfinite(in.resource_interval) || in.resource_interval < 0) {
    return InvalidArgumentError(
        fmt::format("resource_interval: must be a finite number >= 0 seconds (0 turns sampling off), got {}",
                    in.resource_interval));
  }
  TORCHX_ASSIGN_OR_RETURN(AppPlan plan, BuildAppPlan(app, in));
  DryRunInfo info;
  info.app = app;
  info.cfg["state_dir"] = state_dir;
  info.app_id = in.app_id;
  info.app_id_is_final = true;  // Schedule records the app under it
  info.request = RenderAppPlan(plan);
  info.payload = AppPlanToJson(plan);
  planned_payload_ = info.payload;
  planned_ = std::move(plan);
  return info;
}

Result<std::string> LocalScheduler::Schedule(const DryRunInfo& info) {
  std::string state_dir = RecordedStateDir(info.cfg);
  if (state_dir.empty()) state_dir = default_state_dir_;
  if (supervisor_.empty()) {
    TORCHX_ASSIGN_OR_RETURN(supervisor_, FindSupervisor());
  }
  const std::string& supervisor = supervisor_;
  TORCHX_ASSIGN_OR_RETURN(StateStore * store, Store(state_dir));
  std::optional<AppPlan> planned;
  if (planned_ && info.payload == planned_payload_) {
    planned.swap(planned_);
    planned_payload_.clear();
  } else {
    TORCHX_ASSIGN_OR_RETURN(planned, AppPlanFromJson(info.payload));
  }
  const AppPlan& plan = *planned;
  // The replicas' output goes there: a directory that cannot be made (log_dir under a file, a
  // read-only file system) is an error now, not an app whose output silently goes nowhere.
  if (!internal::CreatePrivateDirs(plan.app_dir)) {
    return FailedPreconditionError(fmt::format("local: cannot create the app's log directory {}: {} (check log_dir)",
                                               plan.app_dir, strerror(errno)));
  }
  AppRecord rec;
  rec.app_id = info.app_id;
  rec.session = session_name();
  rec.name = info.app.name;
  rec.appdef_json = specs::AppDefToJson(info.app, -1);
  rec.plan_json = AppPlanToStoredJson(plan);
  rec.app_dir = plan.app_dir;
  rec.state = AppState::kSubmitted;
  rec.created = rec.updated = NowSeconds();
  // A redirect to an app that is not there yet (or never will be) finds nothing.
  if (state_dir != default_state_dir_) {
    TORCHX_ASSIGN_OR_RETURN(StateStore * def, Store(default_state_dir_));
    TORCHX_RETURN_IF_ERROR(def->PutRedirect(rec.app_id, state_dir));
  }
  if (StartsDetached(plan)) {
    std::string context = starter_->LaunchContext();
    if (auto warm = warm_.Claim(state_dir, supervisor, context, starter_->ProcessId())) {
      return ScheduleWarm(*store, supervisor, state_dir, plan, std::move(*warm), std::move(rec), std::move(context));
    }
    return ScheduleDetached(*store, supervisor, state_dir, plan, std::move(rec), std::move(context));
  }
  TORCHX_RETURN_IF_ERROR(store->InsertApp(rec));
  return SpawnSupervisor(*store, supervisor, state_dir, rec.app_id);
}

Result<std::string> LocalScheduler::SpawnSupervisor(StateStore& store, const std::string& supervisor,
                                                    const std::string& state_dir, const std::string& app_id) {
  // The supervisor starts in its own session with no terminal and no inherited stdio, forks
  // once more, and its first process exits as soon as the app is running: reaping it here
  // leaves no zombie behind in long-lived callers (a Python process, Ax).
  Result<int> status = starter_->RunToExit({supervisor, state_dir, app_id});
  if (!status.ok() || !WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    std::string why =
        !status.ok() ? status.status().message() : fmt::format("{} exited before the app started", supervisor);
    (void)store.SetAppState(app_id, AppState::kFailed, 0, why, "<NONE>", FailureCause::kSupervisorLost);
    return UnavailableError(fmt::format("local: {}", why));
  }
  return app_id;
}

// A small app handed to a supervisor of this process's that is idle (warm_supervisor.h): its
// record and the caller's environment sent, the supervisor starts the replicas and records the
// app RUNNING, then answers. A supervisor gone before it read the request has refused it (the
// send fails): the app is started here instead, as a new one.
Result<std::string> LocalScheduler::ScheduleWarm(StateStore& store, const std::string& supervisor,
                                                 const std::string& state_dir, const AppPlan& plan,
                                                 WarmSupervisors::Entry warm, AppRecord rec, std::string context) {
  WarmRequest req;
  req.app_id = rec.app_id;
  req.session = rec.session;
  req.name = rec.name;
  req.appdef_json = rec.appdef_json;
  req.plan_json = rec.plan_json;
  req.app_dir = rec.app_dir;
  req.created = rec.created;
  req.env = starter_->Environment();
  if (!SendAll(warm.fd, EncodeWarmRequest(req))) {
    ::close(warm.fd);
    return ScheduleDetached(store, supervisor, state_dir, plan, std::move(rec), std::move(context));
  }
  std::string answer = ReadWarmAnswer(warm.fd);
  if (answer.size() == 1 && answer[0] == kWarmStarted) {
    warm_.Add(std::move(warm));
    return rec.app_id;
  }
  ::close(warm.fd);
  if (!answer.empty() && answer[0] == kWarmRefused) {
    std::string why = answer.substr(1);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return UnavailableError(fmt::format("local: {}", why));
  }
  // Gone without a word: if it recorded the app first, the app is there, and the next reader
  // finds its supervisor dead; else nothing was recorded.
  if (auto found = store.GetApp(rec.app_id); found.ok() && found->has_value()) return rec.app_id;
  return UnavailableError(
      fmt::format("local: the supervisor (pid {}) stopped before app {} started", warm.pid, rec.app_id));
}

// A small app: its replicas and supervisor started here (detached_start.h), then the app recorded
// RUNNING with both in one transaction, then the supervisor told to take over. Until then nothing
// runs that could outlive a failure here: the supervisor stops the replicas unless told.
Result<std::string> LocalScheduler::ScheduleDetached(StateStore& store, const std::string& supervisor,
                                                     const std::string& state_dir, const AppPlan& plan, AppRecord rec,
                                                     std::string context) {
  // The replica's error file is in its directory: there before it starts.
  for (const auto& [role, _] : plan.roles) (void)internal::CreatePrivateDirs((fs::path(plan.app_dir) / role).string());
  for (const ReplicaPlan& rp : plan.replicas) MakeReplicaDir(rp.log_dir);
  TORCHX_ASSIGN_OR_RETURN(auto started, starter_->StartDetached(supervisor, state_dir, rec.app_id, plan));
  rec.state = AppState::kRunning;
  rec.supervisor_pid = started->supervisor_pid();
  rec.supervisor_start = started->supervisor_identity();
  std::vector<ReplicaRecord> rows;
  rows.reserve(plan.replicas.size());
  for (size_t i = 0; i < plan.replicas.size(); ++i) {
    const DetachedReplica& r = started->replicas()[i];
    rows.push_back({rec.app_id, plan.replicas[i].role, plan.replicas[i].replica_id, 0, r.pid, r.identity,
                    AppState::kRunning, std::nullopt, "<NONE>"});
  }
  TORCHX_RETURN_IF_ERROR(store.InsertStartedApp(rec, rows));  // else abandoned: the supervisor stops them
  started->Commit();
  warm_.Add({started->TakeLink(), started->supervisor_pid(), started->supervisor_identity(), state_dir, supervisor,
             std::move(context), starter_->ProcessId()});
  return rec.app_id;
}

Result<std::optional<LocalScheduler::Found>> LocalScheduler::Find(const std::string& app_id) {
  TORCHX_ASSIGN_OR_RETURN(StateStore * store, Store(default_state_dir_));
  TORCHX_ASSIGN_OR_RETURN(auto app, store->GetApp(app_id));
  if (!app) {
    TORCHX_ASSIGN_OR_RETURN(auto redirect, store->GetRedirect(app_id));
    if (!redirect) return std::optional<Found>();
    TORCHX_ASSIGN_OR_RETURN(store, Store(*redirect));
    TORCHX_ASSIGN_OR_RETURN(app, store->GetApp(app_id));
    if (!app) return std::optional<Found>();
  }
  TORCHX_RETURN_IF_ERROR(CheckLiveness(*store, *app));
  return std::optional<Found>(Found{store, std::move(*app)});
}

Status LocalScheduler::CheckLiveness(StateStore& store, AppRecord& app) {
  if (specs::IsTerminal(app.state)) return OkStatus();
  std::string why;
  FailureCause cause = FailureCause::kSupervisorLost;
  if (app.supervisor_pid == 0) {
    if (NowSeconds() - app.created < 60) return OkStatus();  // still starting
    why = kSupervisorNeverStarted;
  } else if (FromEarlierBoot(app.supervisor_start)) {
    why = kHostRebooted;
    cause = FailureCause::kNodeFailure;
  } else if (!IsSameProcess(app.supervisor_pid, app.supervisor_start)) {
    why = fmt::format("the app's supervisor (pid {}) died unexpectedly; its replicas were stopped", app.supervisor_pid);
  } else {
    return OkStatus();
  }
  // A listed record lacks the error file's text, which the failed state keeps.
  std::string structured_error_msg = app.structured_error_msg;
  if (auto full = store.GetApp(app.app_id); full.ok() && *full) structured_error_msg = (*full)->structured_error_msg;
  TORCHX_ASSIGN_OR_RETURN(auto replicas, store.GetReplicas(app.app_id));
  for (ReplicaRecord& r : replicas) {
    if (specs::IsTerminal(r.state)) continue;
    if (!FromEarlierBoot(r.proc_start)) SignalGroupOrLeftovers(r.pid, r.proc_start, SIGKILL);
    r.state = AppState::kFailed;
  }
  TORCHX_RETURN_IF_ERROR(store.PutReplicas(replicas));
  // The summary before the state, as the watchdog writes it when it gets there first (it writes
  // none over a recorded end): whoever records the end leaves it.
  if (auto full = store.GetApp(app.app_id); full.ok() && *full) WriteLostAppSummary(**full, replicas, NowSeconds());
  TORCHX_RETURN_IF_ERROR(
      store.SetAppState(app.app_id, AppState::kFailed, app.num_restarts, why, structured_error_msg, cause).status());
  TORCHX_ASSIGN_OR_RETURN(auto fresh, store.GetApp(app.app_id));
  if (fresh) app = std::move(*fresh);
  return OkStatus();
}

Result<std::optional<FailureReport>> LocalScheduler::ClassifyFailure(const std::string& app_id) {
  TORCHX_ASSIGN_OR_RETURN(auto found, Find(app_id));
  if (!found) return std::optional<FailureReport>();
  const AppRecord& a = found->app;
  if (a.state != AppState::kFailed && a.state != AppState::kCancelled) {
    return FailedPreconditionError(
        fmt::format("local: app {} is {}: it has no failure cause", app_id, specs::AppStateName(a.state)));
  }
  TORCHX_ASSIGN_OR_RETURN(auto replicas, found->store->GetReplicas(app_id));
  return std::optional(ClassifyLocalEnd(a, replicas));
}

Result<std::optional<DescribeAppResponse>> LocalScheduler::Describe(const std::string& app_id) {
  TORCHX_ASSIGN_OR_RETURN(auto found, Find(app_id));
  if (!found) return std::optional<DescribeAppResponse>();
  const AppRecord& a = found->app;
  DescribeAppResponse d;
  d.app_id = a.app_id;
  d.state = a.state;
  d.num_restarts = a.num_restarts;
  d.msg = a.msg;
  d.structured_error_msg = a.structured_error_msg;
  d.ui_url = "file://" + a.app_dir;
  auto app = specs::AppDefFromJson(a.appdef_json);
  if (app) d.app = std::move(*app);
  TORCHX_ASSIGN_OR_RETURN(auto replicas, found->store->GetReplicas(app_id));
  if (d.app) {
    std::map<std::pair<std::string_view, int>, const ReplicaRecord*> by_replica;  // the last row of each wins
    for (const ReplicaRecord& rec : replicas) by_replica[{rec.role, rec.replica_id}] = &rec;
    for (const specs::Role& role : d.app->roles) {
      specs::RoleStatus rs{role.name, {}};
      rs.replicas.reserve(static_cast<size_t>(std::max(0, role.num_replicas)));
      for (int i = 0; i < role.num_replicas; ++i) {
        specs::ReplicaStatus r{i, a.state == AppState::kRunning ? AppState::kPending : a.state, role.name, kHostname,
                               "<NONE>"};
        if (auto rec = by_replica.find({role.name, i}); rec != by_replica.end()) {
          r.state = rec->second->state;
          r.structured_error_msg = rec->second->structured_error_msg;
        }
        rs.replicas.push_back(std::move(r));
      }
      d.roles_statuses.push_back(std::move(rs));
    }
  }
  return std::optional<DescribeAppResponse>(std::move(d));
}

Result<std::optional<DryRunInfo>> LocalScheduler::DescribeNative(const std::string& app_id) {
  TORCHX_ASSIGN_OR_RETURN(auto found, Find(app_id));
  if (!found) return std::optional<DryRunInfo>();
  TORCHX_ASSIGN_OR_RETURN(AppPlan plan, AppPlanFromJson(found->app.plan_json));
  DryRunInfo info;
  info.app_id = app_id;
  info.request = RenderAppPlan(plan);
  info.payload = AppPlanToJson(plan);  // the request's form, whichever form the store holds
  if (auto app = specs::AppDefFromJson(found->app.appdef_json)) info.app = std::move(*app);
  return std::optional<DryRunInfo>(std::move(info));
}

Status LocalScheduler::DoCancel(const std::string& app_id) {
  TORCHX_ASSIGN_OR_RETURN(auto found, Find(app_id));
  if (!found) return OkStatus();
  TORCHX_RETURN_IF_ERROR(found->store->RequestCancel(app_id));
  const AppRecord& a = found->app;
  if (specs::IsTerminal(a.state)) return OkStatus();
  // Queued with the app's token: a supervisor that has moved on to another app (a warm one)
  // ignores it.
  if (IsSameProcess(a.supervisor_pid, a.supervisor_start)) {
    sigval value{};
    value.sival_int = CancelToken(app_id);
    ::sigqueue(a.supervisor_pid, SIGTERM, value);
  }
  return OkStatus();
}

Status LocalScheduler::Delete(const std::string& app_id) {
  TORCHX_ASSIGN_OR_RETURN(auto found, Find(app_id));
  if (!found) return NotFoundError(fmt::format("local: app {} does not exist", app_id));
  if (!specs::IsTerminal(found->app.state)) {
    return FailedPreconditionError(fmt::format("local: app {} is {}; cancel it before deleting it", app_id,
                                               specs::AppStateName(found->app.state)));
  }
  std::error_code ec;
  fs::remove_all(found->app.app_dir, ec);
  TORCHX_RETURN_IF_ERROR(found->store->DeleteApp(app_id));
  TORCHX_ASSIGN_OR_RETURN(StateStore * def, Store(default_state_dir_));
  return def->DeleteRedirect(app_id);
}

Result<std::vector<ReplicaAttempt>> LocalScheduler::Attempts(const std::string& app_id) {
  TORCHX_ASSIGN_OR_RETURN(auto found, Find(app_id));
  if (!found) return NotFoundError(fmt::format("local: app {} does not exist", app_id));
  TORCHX_ASSIGN_OR_RETURN(auto rows, found->store->GetAttempts(app_id));
  std::vector<ReplicaAttempt> out;
  out.reserve(rows.size());
  for (AttemptRecord& r : rows) {
    out.push_back(ReplicaAttempt{std::move(r.role), r.replica_id, r.attempt, r.state, r.exit_code, r.started, r.ended});
  }
  return out;
}

Result<std::optional<std::vector<ProcessStack>>> LocalScheduler::DumpStacks(const std::string& app_id,
                                                                            const StackOptions& options) {
  TORCHX_ASSIGN_OR_RETURN(auto found, Find(app_id));
  if (!found) return std::optional<std::vector<ProcessStack>>();
  if (specs::IsTerminal(found->app.state)) {
    return FailedPreconditionError(
        fmt::format("app {} has ended ({}): it has no process to dump", app_id, specs::AppStateName(found->app.state)));
  }
  TORCHX_ASSIGN_OR_RETURN(std::vector<ReplicaRecord> replicas, found->store->GetReplicas(app_id));
  std::vector<std::string> roles;
  std::vector<ProcessStack> out;
  auto runner = internal::MakeSystemCommandRunner();
  bool matched = false;
  // The whole dump within a minute: a hundred hung processes each taking py-spy's 10 s would keep
  // the caller for a quarter of an hour; those past it are listed with why.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (const ReplicaRecord& r : replicas) {
    if (std::find(roles.begin(), roles.end(), r.role) == roles.end()) roles.push_back(r.role);
    if (!options.role.empty() && r.role != options.role) continue;
    if (options.replica_id && r.replica_id != *options.replica_id) continue;
    matched = true;
    // The recorded leader, if it is still that process (a pid can be reused once it is gone).
    if (r.pid <= 0 || specs::IsTerminal(r.state) || !IsSameProcess(r.pid, r.proc_start)) continue;
    for (ProcessStack& p : ReplicaProcesses(r.pid)) {
      p.role = r.role;
      p.replica_id = r.replica_id;
      p.host = std::string(kHostname);
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left < std::chrono::seconds(1)) {
        p.error = "not dumped: the dump's 60 s limit was reached (dump one replica with --role and --replica)";
      } else {
        DumpProcessStack(p, *runner, std::min<std::chrono::milliseconds>(left, std::chrono::seconds(10)));
      }
      out.push_back(std::move(p));
    }
  }
  if (!matched) {
    std::string names;
    for (const std::string& role : roles) names += (names.empty() ? "" : ", ") + role;
    return NotFoundError(fmt::format("no replica of app {} matches role `{}`{}; roles: [{}]", app_id, options.role,
                                     options.replica_id ? fmt::format(" replica {}", *options.replica_id) : "", names));
  }
  return std::optional(std::move(out));
}

Status LocalScheduler::Profile(const std::string& app_id, const ProfileOptions& options) {
  TORCHX_ASSIGN_OR_RETURN(auto found, Find(app_id));
  if (!found) return NotFoundError(fmt::format("app {} not found", app_id));
  if (specs::IsTerminal(found->app.state)) {
    return FailedPreconditionError(fmt::format("app {} has ended ({}): it has no process to profile", app_id,
                                               specs::AppStateName(found->app.state)));
  }
  TORCHX_ASSIGN_OR_RETURN(std::vector<ReplicaRecord> replicas, found->store->GetReplicas(app_id));
  std::vector<const ReplicaRecord*> chosen;
  std::string names;
  for (const ReplicaRecord& r : replicas) {
    names += fmt::format("{}{}/{}", names.empty() ? "" : ", ", r.role, r.replica_id);
    if (!options.role.empty() && r.role != options.role) continue;
    if (options.replica_id && r.replica_id != *options.replica_id) continue;
    chosen.push_back(&r);
  }
  if (chosen.empty()) return NotFoundError(fmt::format("no replica of app {} matches; replicas: {}", app_id, names));
  if (chosen.size() > 1) {
    return InvalidArgumentError(fmt::format(
        "a profile is of one replica, and app {} has {} that match ({}): name one with --role and --replica", app_id,
        chosen.size(), names));
  }
  const ReplicaRecord& r = *chosen.front();
  if (r.pid <= 0 || specs::IsTerminal(r.state) || !IsSameProcess(r.pid, r.proc_start)) {
    return FailedPreconditionError(fmt::format("replica {}/{} is not running", r.role, r.replica_id));
  }
  auto runner = internal::MakeSystemCommandRunner();
  // The top Python process of the replica (a shell wrapper's child, torchrun's agent), with its
  // subprocesses (the worker ranks).
  if (auto top = TopPythonProcess(ReplicaProcesses(r.pid))) {
    return RecordProfile(*top, options.seconds, options.output, *runner);
  }
  return FailedPreconditionError(fmt::format("replica {}/{} runs no Python process", r.role, r.replica_id));
}

Result<std::optional<AppUsage>> LocalScheduler::ResourceUsage(const std::string& app_id, const UsageOptions& options) {
  TORCHX_ASSIGN_OR_RETURN(auto found, Find(app_id));
  if (!found) return std::optional<AppUsage>();
  TORCHX_ASSIGN_OR_RETURN(AppPlan plan, AppPlanFromJson(found->app.plan_json));
  TORCHX_ASSIGN_OR_RETURN(auto record, found->store->GetUsage(app_id, options.since.value_or(0)));
  AppUsage usage;
  usage.interval_seconds = plan.resource_interval;
  std::map<std::pair<std::string, int>, size_t> index;
  for (const ReplicaPlan& rp : plan.replicas) {
    index[{rp.role, rp.replica_id}] = usage.replicas.size();
    usage.replicas.push_back({rp.role, rp.replica_id, record ? record->host : std::string(kHostname), {}});
  }
  if (plan.resource_interval <= 0) {
    usage.note = "not sampled: the app ran with resource_interval=0";
  } else if (!record) {
    usage.note = specs::IsTerminal(found->app.state) ? "no samples: the app ended before its first sample"
                                                     : "no samples yet: the first is taken a second after the start";
  }
  if (record) {
    usage.gpu_note = record->gpu_note;
    HostUsage host{record->host, {}};
    for (const UsageRow& row : record->rows) {
      auto sample = SampleFromJson(row.sample_json);
      if (!sample) continue;  // a row another version wrote
      if (row.replica_id < 0) {
        host.samples.push_back(std::move(*sample));
      } else if (auto it = index.find({row.role, row.replica_id}); it != index.end()) {
        usage.replicas[it->second].samples.push_back(std::move(*sample));
      }
    }
    if (!host.samples.empty()) usage.hosts.push_back(std::move(host));
    if (usage.gpu_note.empty() && usage.hosts.empty()) usage.gpu_note = "no GPU reading yet";
  }
  if (options.max_samples > 0) {
    auto keep_newest = [&](std::vector<UsageSample>& samples) {
      if (samples.size() > options.max_samples) {
        samples.erase(samples.begin(), samples.end() - static_cast<std::ptrdiff_t>(options.max_samples));
      }
    };
    for (ReplicaUsage& r : usage.replicas) keep_newest(r.samples);
    for (HostUsage& h : usage.hosts) keep_newest(h.samples);
  }
  return std::optional<AppUsage>(std::move(usage));
}

Result<std::vector<ListAppResponse>> LocalScheduler::List() {
  TORCHX_ASSIGN_OR_RETURN(StateStore * store, Store(default_state_dir_));
  TORCHX_ASSIGN_OR_RETURN(auto apps, store->ListApps());
  std::vector<ListAppResponse> out;
  out.reserve(apps.size());
  // Local apps are the store owner's (the state directory is private to its user).
  std::string user;
  struct stat st {};
  if (::stat(store->path().c_str(), &st) == 0) {
    // getpwuid_r: getpwuid's static buffer races when clients list at once (tsan saw it).
    passwd pw{};
    passwd* found = nullptr;
    std::array<char, 4096> buf{};
    if (::getpwuid_r(st.st_uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) user = pw.pw_name;
    if (user.empty()) user = std::to_string(st.st_uid);
  }
  for (AppRecord& a : apps) {
    TORCHX_RETURN_IF_ERROR(CheckLiveness(*store, a));
    ListAppResponse r{a.app_id, a.state, "", a.name, a.created, a.num_restarts};
    if (specs::IsTerminal(a.state)) r.ended = a.updated;  // a terminal record is written last
    r.user = user;
    if (a.state == AppState::kFailed) r.reason = a.msg;
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<HostInfo>> LocalScheduler::Hosts() {
  HostInfo host = ReadThisHost();
  TORCHX_ASSIGN_OR_RETURN(StateStore * store, Store(default_state_dir_));
  TORCHX_ASSIGN_OR_RETURN(auto apps, store->ListApps());
  for (AppRecord& a : apps) {
    if (specs::IsTerminal(a.state)) continue;
    TORCHX_RETURN_IF_ERROR(CheckLiveness(*store, a));
    if (specs::IsTerminal(a.state)) continue;
    TORCHX_ASSIGN_OR_RETURN(std::vector<ReplicaRecord> replicas, store->GetReplicas(a.app_id));
    HostApp app{a.app_id, "", {}};
    for (const ReplicaRecord& r : replicas) {
      if (r.state == AppState::kRunning) app.where.push_back(fmt::format("{}/{}", r.role, r.replica_id));
    }
    if (!app.where.empty()) host.apps.push_back(std::move(app));
  }
  return std::vector<HostInfo>{std::move(host)};
}

Result<std::string> LocalScheduler::Helper(std::string_view function, std::string_view args_json) {
  return LocalHelper(function, args_json);
}

Result<std::unique_ptr<LogIterator>> LocalScheduler::LogIter(const std::string& app_id, const LogOptions& options) {
  TORCHX_ASSIGN_OR_RETURN(auto found, Find(app_id));
  if (!found) return NotFoundError(fmt::format("local: app {} does not exist", app_id));
  const char* file = options.stream == LogStream::kStdout   ? "stdout.log"
                     : options.stream == LogStream::kStderr ? "stderr.log"
                                                            : "combined.log";
  fs::path dir = fs::path(found->app.app_dir) / options.role / std::to_string(options.replica);
  bool follow = options.follow;
  if (options.attempt) {  // an earlier run's logs were moved to attempt_<n>/ when it was retried
    TORCHX_ASSIGN_OR_RETURN(auto replicas, found->store->GetReplicas(app_id));
    int latest = 0;
    for (const ReplicaRecord& r : replicas) {
      if (r.role == options.role && r.replica_id == options.replica) latest = r.attempt;
    }
    if (*options.attempt < 0 || *options.attempt > latest) {
      return NotFoundError(fmt::format("log: {}/{} has no attempt {}; its attempts are 0..{}", options.role,
                                       options.replica, *options.attempt, latest));
    }
    if (*options.attempt < latest) {
      dir /= fmt::format("attempt_{}", *options.attempt);
      follow = false;  // an ended attempt: nothing more will be written
    }
  }
  std::string path = (dir / file).string();
  StateStore* store = found->store;
  auto terminal = [this, store, app_id]() {
    auto app = store->GetApp(app_id);
    if (!app || !*app) return true;
    (void)CheckLiveness(*store, **app);
    return specs::IsTerminal((*app)->state);
  };
  return MakeLogFileReader(std::move(path), follow, std::move(terminal));
}

bool LocalScheduler::WaitForUpdate(const std::string& app_id, std::chrono::milliseconds max_wait) {
  return WaitForAnyUpdate({app_id}, max_wait);
}

bool LocalScheduler::WaitForAnyUpdate(const std::vector<std::string>& app_ids, std::chrono::milliseconds max_wait) {
  int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd < 0) return false;
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  std::error_code ec;
  // Apps not running yet, with the state they were seen in: their start is written to the store
  // only (nothing lands in their directory), so for them the store's WAL is watched too. A
  // managed job's driver that had just submitted its next attempt otherwise slept its 10 s
  // notified wait before it saw the attempt run.
  struct Starting {
    const std::string* app_id;
    AppState seen;
    StateStore* store;
  };
  std::vector<Starting> starting;
  for (const std::string& app_id : app_ids) {
    auto found = Find(app_id);
    if (!found) return false;  // its store cannot be read: the caller sleeps, it does not spin
    if (!*found || specs::IsTerminal((*found)->app.state)) return true;  // changed already
    if ((*found)->app.state != AppState::kRunning) starting.push_back({&app_id, (*found)->app.state, (*found)->store});
    const std::string& dir = (*found)->app.app_dir;
    // Watch first, then look: a summary written in between is seen either way.
    if (inotify_add_watch(fd, dir.c_str(), IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE) < 0) return false;
    if (fs::exists(fs::path(dir) / "SUCCESS", ec)) {
      // The summary is there but the record above is not terminal: the supervisor writes the
      // summary first and the state next (a few ms later), or it is retrying that write (a locked
      // store, a full disk). Woken by the store's next commit, which writes its WAL: not a fixed
      // wait (up to 200 ms at `run --wait`'s pace), nor a spin while the store is stuck.
      std::string wal = (*found)->store->path() + "-wal";
      if (inotify_add_watch(fd, wal.c_str(), IN_MODIFY) >= 0) {
        // Watch first, then look: a commit in between is seen either way.
        auto again = (*found)->store->GetApp(app_id);
        if (again.ok() && (!*again || specs::IsTerminal((*again)->state))) return true;
      }
    }
  }
  for (const Starting& a : starting) {
    // Watch first, then look (a store's WAL watched twice is one watch).
    if (inotify_add_watch(fd, (a.store->path() + "-wal").c_str(), IN_MODIFY) < 0) continue;
    auto again = a.store->GetApp(*a.app_id);
    if (again.ok() && (!*again || (*again)->state != a.seen)) return true;
  }
  pollfd pfd{fd, POLLIN, 0};
  ::poll(&pfd, 1, static_cast<int>(max_wait.count()));
  return true;
}

std::vector<SchedulerEntry> BackendSchedulers() {
  std::vector<SchedulerEntry> out;
  for (const char* name : {"local_cwd", "local"}) {
    out.push_back({name, [name](const SchedulerContext& context) -> Result<std::unique_ptr<Scheduler>> {
                     return std::unique_ptr<Scheduler>(std::make_unique<LocalScheduler>(
                         name, context.session_name, internal::DefaultStateDir(), context.devices));
                   }});
  }
  return out;
}

}  // namespace torchx::schedulers::local
