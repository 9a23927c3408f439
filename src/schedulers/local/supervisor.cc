// The local supervisor process (see supervisor.h): the policy (supervisor_policy.h) decides,
// and this file carries its actions out with the OS pieces: the process launcher, the replicas'
// log writers, the event loop, the state store writer and the watchdog. It also turns what the
// OS reports (exits, signals, the grace timer) into the policy's events.
#include "schedulers/local/supervisor.h"

#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/daemon.h"
#include "core/json_text.h"
#include "core/state_dir.h"
#include "schedulers/local/app_plan.h"
#include "schedulers/local/detached_start.h"
#include "schedulers/local/end_summary.h"
#include "schedulers/local/event_loop.h"
#include "schedulers/local/process_identity.h"
#include "schedulers/local/process_launcher.h"
#include "schedulers/local/replica_dirs.h"
#include "schedulers/local/replica_logs.h"
#include "schedulers/local/state_store.h"
#include "schedulers/local/supervisor_policy.h"
#include "schedulers/local/supervisor_store.h"
#include "schedulers/local/usage_sampler.h"
#include "schedulers/local/warm_supervisor.h"
#include "schedulers/local/watchdog.h"
#include "torchx/clock.h"
#include "torchx/devices/gpu_metrics.h"
#include "torchx/schedulers/usage.h"

namespace torchx::schedulers::local {
namespace {

namespace fs = std::filesystem;
using specs::AppState;

std::string ReadFileOr(const std::string& path, const std::string& fallback) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fallback;
  std::stringstream buf;
  buf << in.rdbuf();
  std::string s = buf.str();
  return s.empty() ? fallback : s;
}

// This process's identity (constant: a warm supervisor records it for every app it runs).
const std::string& SelfIdentity() {
  static const std::string identity = ProcessIdentity(getpid());
  return identity;
}

// Tells the launcher (SupervisorMain's first process) that the app is under way.
void SignalReady(int ready_fd) { internal::ReportReady(ready_fd, true); }

// From here on the supervisor's own diagnostics go to <app_dir>/supervisor.log (until then, to
// /dev/null: a failure to start is recorded as the app's message). It never holds the launcher's
// stdout open (a caller reading `$(torchx run ...)` would never see EOF).
void RedirectDiagnostics(const std::string& app_dir) {
  int log = ::open((fs::path(app_dir) / "supervisor.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log >= 0) {
    dup2(log, 1);
    dup2(log, 2);
    ::close(log);
  }
}

class Supervisor {
 public:
  Supervisor(StateStore& state, std::string state_dir, AppRecord app, AppPlan plan, ProcessLauncher& launcher,
             SupervisorStore& store, const Clock& clock, Watchdog& watchdog)
      : state_(state),
        state_dir_(std::move(state_dir)),
        app_(std::move(app)),
        plan_(std::move(plan)),
        launcher_(launcher),
        store_(store),
        clock_(clock),
        watchdog_(watchdog),
        policy_(app_.app_id, plan_),
        procs_(plan_.replicas.size()) {
    logs_.reserve(plan_.replicas.size());
    for (const ReplicaPlan& rp : plan_.replicas) logs_.emplace_back(rp.log_dir, rp.error_file);
  }

  // `adopted`: the replicas were started before this process (detached_start.h); the launcher
  // hands them out, and the app and this process are recorded already.
  int Run(int ready_fd, bool adopted) {
    if (!watchdog_.started()) watchdog_.Start(state_dir_, app_.app_id, ready_fd);
    if (Status s = Setup(); !s.ok()) {
      // Adopted replicas die with this process (PDEATHSIG), and the watchdog stops their children.
      store_.SetAppState(AppState::kFailed, 0, s.message(), "<NONE>", FailureCause::kSupervisorLost);
      return 1;
    }
    // A cancel that arrived before the pid was recorded could not signal us; it left a flag. Both
    // in one transaction: one side sees the other. (An adopted start was recorded with the pid.)
    auto cancelled =
        adopted ? Result<bool>(false) : state_.SetSupervisorAndCheckCancel(app_.app_id, getpid(), SelfIdentity());
    if (cancelled.ok() && *cancelled) {
      store_.SetAppState(AppState::kCancelled, 0, "cancelled before it started", "<NONE>", FailureCause::kCancelled);
      SignalReady(ready_fd);
      watchdog_.Done();
      return 0;
    }
    for (const auto& [role, _] : plan_.roles)
      (void)internal::CreatePrivateDirs((fs::path(plan_.app_dir) / role).string());
    // What the launcher waits for is the replicas started and recorded RUNNING, in one
    // transaction; this process's own diagnostics file is created after it is told, and a
    // replica's log files with its first output (ReplicaLogs).
    if (plan_.replicas.size() > 1) {
      std::vector<std::string> dirs;
      dirs.reserve(plan_.replicas.size());
      for (const ReplicaPlan& rp : plan_.replicas) dirs.push_back(rp.log_dir);
      dirs_ahead_ = std::make_unique<ReplicaDirs>(std::move(dirs));
    }
    watchdog_.Hold();
    Apply(policy_.Start());
    watchdog_.Flush();
    dirs_ahead_.reset();
    if (adopted) {
      // The caller recorded the replicas and RUNNING: only a row that changed since is written.
      SupervisorActions actions = policy_.OnLaunched();
      std::erase_if(actions, [](const SupervisorAction& a) {
        const auto* rec = std::get_if<action::RecordApp>(&a);
        return rec && rec->state == AppState::kRunning && rec->num_restarts == 0 && rec->msg.empty();
      });
      FlushRecords();
      Apply(actions);
    } else {
      RecordStart(policy_.OnLaunched());
    }
    SignalReady(ready_fd);
    RedirectDiagnostics(plan_.app_dir);
    // The first sample soon after the start, so that a short job has one too. It also ends the
    // start's burst of writes (RunSupervisor): without samples, that is now.
    if (plan_.resource_interval > 0) {
      loop_->StartTicker(std::min(1.0, plan_.resource_interval), plan_.resource_interval);
    } else {
      state_.SetWalCheckpointPages(StateStore::kWalCheckpointPages);
    }
    Loop();
    return 0;
  }

 private:
  struct Output {
    size_t replica;
    ReplicaLogs::Stream stream;
  };
  struct Process {  // the replica's latest launched process
    int pid = 0;
    std::string identity;
    int out_fd = -1, err_fd = -1;
  };

  Status Setup() {
    // Every replica needs two pipes and three log files: lift the soft fd limit to the hard one.
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
      lim.rlim_cur = lim.rlim_max;
      setrlimit(RLIMIT_NOFILE, &lim);
    }
    auto loop = EventLoop::Create({SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT});
    if (!loop) return loop.error();
    loop_ = std::move(*loop);
    loop_->IgnoreCancelsOtherThan(CancelToken(app_.app_id));
    signal(SIGPIPE, SIG_IGN);
    return OkStatus();
  }

  void Apply(const SupervisorActions& actions) {
    for (const SupervisorAction& a : actions) {
      if (const auto* spawn = std::get_if<action::Spawn>(&a)) {
        Spawn(*spawn);
      } else if (const auto* sig = std::get_if<action::Signal>(&a)) {
        const Process& p = procs_[sig->replica];
        launcher_.SignalGroup(p.pid, p.identity, sig->signal);
      } else if (const auto* arm = std::get_if<action::ArmGrace>(&a)) {
        loop_->ArmTimer(arm->seconds);
      } else if (std::holds_alternative<action::DisarmGrace>(a)) {
        loop_->DisarmTimer();
      } else if (const auto* rec = std::get_if<action::RecordApp>(&a)) {
        store_.SetAppState(rec->state, rec->num_restarts, rec->msg, rec->structured_error, std::nullopt);
      } else if (const auto* fin = std::get_if<action::Finish>(&a)) {
        Finish(*fin);
      }
    }
  }

  // The replicas' rows with the app's RUNNING (OnLaunched's RecordApp) in one write; any other
  // action as Apply carries it out.
  void RecordStart(SupervisorActions actions) {
    auto record = std::find_if(actions.begin(), actions.end(),
                               [](const SupervisorAction& a) { return std::holds_alternative<action::RecordApp>(a); });
    if (record == actions.end()) {
      FlushRecords();
    } else {
      action::RecordApp app = std::get<action::RecordApp>(*record);
      actions.erase(record);
      store_.RecordReplicasAndState(policy_.TakeReplicaRecords(), app.state, app.num_restarts, app.msg,
                                    app.structured_error);
    }
    Apply(actions);
  }

  void Spawn(const action::Spawn& s) {
    size_t i = s.replica;
    const ReplicaPlan& rp = plan_.replicas[i];
    if (s.attempt > 0) CloseOutput(i);
    bool dir_made = dirs_ahead_ && s.attempt == 0;
    if (dir_made) dirs_ahead_->WaitFor(i);
    logs_[i].StartAttempt(s.attempt, dir_made);
    auto launched = launcher_.Launch(rp);
    if (!launched) {
      Apply(policy_.OnSpawnFailed(i, launched.error().message()));
      return;
    }
    Process& p = procs_[i];
    p.pid = launched->pid;
    p.identity = launched->identity;
    p.out_fd = launched->out_fd;
    p.err_fd = launched->err_fd;
    by_pid_[p.pid] = i;
    watchdog_.ReplicaStarted(p.pid, p.identity);
    for (auto [fd, stream] :
         {std::pair{p.out_fd, ReplicaLogs::Stream::kStdout}, std::pair{p.err_fd, ReplicaLogs::Stream::kStderr}}) {
      loop_->Watch(fd);
      pipes_[fd] = Output{i, stream};
    }
    if (!launched->exec_error.empty())
      logs_[i].WriteStderrLine(fmt::format("{}: {}", ReplicaLabel(rp), launched->exec_error));
    Apply(policy_.OnSpawned(i, p.pid, p.identity, launched->exec_error));
  }

  void Loop() {
    while (!done_) {
      if (policy_.ShouldFinish()) {
        Finalize();
        break;
      }
      for (const EventLoop::Ready& ready : loop_->Wait(-1)) {
        switch (ready.source) {
          case EventLoop::Source::kSignal:
            OnSignals();
            break;
          case EventLoop::Source::kTimer:
            Apply(policy_.OnGraceExpired());
            break;
          case EventLoop::Source::kTicker:
            SampleUsage();
            break;
          case EventLoop::Source::kFd:
            DrainPipe(ready.fd);
            break;
        }
      }
      // The rows of the event that ends the app go with its end record (Finish), in one write.
      if (!policy_.ShouldFinish()) FlushRecords();
    }
  }

  void OnSignals() {
    bool child = false;
    for (int sig : loop_->TakeSignals()) {
      if (sig == SIGCHLD) {
        child = true;
      } else {
        Apply(policy_.OnCancel(sig));
      }
    }
    // A cancel of this app merged into a stale one (meant for the app this process ran before)
    // was dropped with it: the store's flag, which every cancel sets first, says whether it came.
    if (loop_->TakeDroppedCancels() > 0) {
      if (auto app = state_.GetApp(app_.app_id); app.ok() && *app && (**app).cancel_requested) {
        Apply(policy_.OnCancel(SIGTERM));
      }
    }
    if (!child) return;
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      auto owner = by_pid_.find(pid);
      if (owner == by_pid_.end()) continue;  // e.g. the watchdog
      size_t i = owner->second;
      by_pid_.erase(owner);
      ReplicaExit exit{i, WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status)};
      if (exit.exit_code != 0) ReadErrorFile(plan_.replicas[i].error_file, exit);
      Apply(policy_.OnExited(exit));
    }
  }

  static void ReadErrorFile(const std::string& path, ReplicaExit& exit) {
    exit.structured_error = ReadFileOr(path, "<NONE>");
    if (exit.structured_error == "<NONE>") return;
    std::error_code ec;
    auto t = fs::last_write_time(path, ec);
    // Unknown: after every known time, but before a replica without an error file.
    exit.error_written = ec ? fs::file_time_type::max() - fs::file_time_type::duration(1) : t;
  }

  void DrainPipe(int fd) {
    auto it = pipes_.find(fd);
    if (it == pipes_.end()) return;
    Output out = it->second;
    char buf[65536];
    while (true) {
      ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n > 0) {
        logs_[out.replica].Append(out.stream, std::string_view(buf, static_cast<size_t>(n)));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      ClosePipe(fd);  // EOF or error
      return;
    }
  }

  void ClosePipe(int fd) {
    auto it = pipes_.find(fd);
    if (it == pipes_.end()) return;
    Output out = it->second;
    logs_[out.replica].EndStream(out.stream);
    loop_->Unwatch(fd);
    ::close(fd);
    Process& p = procs_[out.replica];
    (out.stream == ReplicaLogs::Stream::kStderr ? p.err_fd : p.out_fd) = -1;
    pipes_.erase(it);
  }

  // What is left in the replica's pipes goes to its logs; then pipes and files are closed.
  void CloseOutput(size_t i) {
    Process& p = procs_[i];
    for (int* fd : {&p.out_fd, &p.err_fd}) {
      if (*fd >= 0) {
        DrainPipe(*fd);
        if (*fd >= 0) ClosePipe(*fd);
      }
    }
    logs_[i].CloseFiles();
  }

  void FlushRecords() { store_.PutReplicas(policy_.TakeReplicaRecords()); }

  // One sample of every running replica (and the host's GPUs) into the store's bounded series.
  // The GPU helper (NVML) is started at the first sample, after the launcher was told the app is up.
  void SampleUsage() {
    if (!sampler_) {
      std::string gpu_note;
      if (auto nvml = devices::StartGpuMetricsHelper(); nvml) {
        gpus_ = std::move(*nvml);
      } else {
        gpu_note = nvml.error().message();
      }
      sampler_.emplace(procs_source_, gpus_.get());
      // The start's burst is over: back to the store's usual checkpoints (RunSupervisor).
      state_.SetWalCheckpointPages(StateStore::kWalCheckpointPages);
      char host[256] = {0};
      if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = 0;
      (void)state_.PutUsageMeta(app_.app_id, plan_.resource_interval, host, gpu_note);
    }
    std::vector<int> leaders(procs_.size(), 0);
    for (const auto& [pid, i] : by_pid_) leaders[i] = pid;
    double now = clock_.EpochSeconds();
    UsageSampler::Result sampled = sampler_->Sample(leaders, now);
    std::vector<UsageRow> rows;
    for (size_t i = 0; i < sampled.replicas.size(); ++i) {
      if (!sampled.replicas[i].processes) continue;  // not running now
      const ReplicaPlan& rp = plan_.replicas[i];
      rows.push_back({rp.role, rp.replica_id, now, SampleToJson(sampled.replicas[i])});
    }
    if (sampled.host) rows.push_back({"", -1, now, SampleToJson(*sampled.host)});
    // Bounded: the last kKeptSamples intervals (an hour at the default 5 s).
    (void)state_.PutUsage(app_.app_id, rows, now - plan_.resource_interval * kKeptSamples);
    // What a sample allocated (the process table, SQLite's statements) is freed again; give it
    // back, so that sampling does not add to the supervisor's resident size between samples.
    malloc_trim(0);
  }

  void Finalize() {
    // Drain what the replicas wrote before exiting (bounded: a stray background process may hold
    // a pipe open), then make sure nothing of the app is left running.
    auto deadline = clock_.Now() + std::chrono::seconds(2);
    while (!pipes_.empty() && clock_.Now() < deadline) {
      for (const EventLoop::Ready& ready : loop_->Wait(100)) {
        if (ready.source == EventLoop::Source::kFd) DrainPipe(ready.fd);
      }
    }
    Apply(policy_.Finish());
  }

  void Finish(const action::Finish& f) {
    for (size_t i = 0; i < procs_.size(); ++i) CloseOutput(i);
    // The summary goes first: a reader that sees the terminal state must find it.
    WriteSummary(f);
    std::vector<ReplicaRecord> rows = policy_.TakeReplicaRecords();  // what the last events left
    rows.insert(rows.end(), f.replicas.begin(), f.replicas.end());
    store_.RecordEnd(rows, f.state, f.num_restarts, f.msg, f.structured_error, f.cause);
    // The watchdog first: it records a supervisor that dies before "done" as FAILED.
    watchdog_.Done();
    state_.CheckpointWal();  // the start's and end's bursts of rows, now that no one waits for them
    done_ = true;
  }

  // TorchX's local scheduler leaves a summary JSON named SUCCESS in the app dir when it ends
  // (end_summary.h).
  void WriteSummary(const action::Finish& f) {
    std::vector<const ReplicaRecord*> records;
    for (const ReplicaRecord& r : f.replicas) records.push_back(&r);
    WriteEndSummary(plan_.app_dir, EndSummaryText(app_.app_id, f.state, clock_.EpochSeconds(), plan_, records));
  }

  StateStore& state_;  // the supervisor's own row and the cancel flag; the app's state goes through store_
  std::string state_dir_;
  AppRecord app_;
  AppPlan plan_;
  ProcessLauncher& launcher_;
  SupervisorStore& store_;
  const Clock& clock_;
  Watchdog& watchdog_;
  SupervisorPolicy policy_;
  std::unique_ptr<EventLoop> loop_;
  std::vector<ReplicaLogs> logs_;
  std::vector<Process> procs_;
  std::map<int, Output> pipes_;     // read end -> whose output
  std::map<pid_t, size_t> by_pid_;  // running leader -> replica
  bool done_ = false;
  static constexpr double kKeptSamples = 720;
  SystemProcSource procs_source_;
  std::unique_ptr<devices::GpuMetrics> gpus_;
  std::optional<UsageSampler> sampler_;
  std::unique_ptr<ReplicaDirs> dirs_ahead_;  // while Run starts the replicas
};

constexpr int kBurstCheckpointPages = 2000;  // the WAL's checkpoint threshold while a start's rows are written

// The replicas started before this process, as its launcher hands them out. Their identities are
// the ones the caller recorded (a replica that has exited already has none left to read); those
// rows are in the store, so the writer does not write them again.
std::map<std::pair<std::string, int>, LaunchedProcess> Adopt(StateStore& store, const std::string& app_id,
                                                             const AppPlan& plan,
                                                             const std::vector<AdoptedReplica>& adopted,
                                                             StateStoreWriter& writer) {
  std::map<std::pair<std::string, int>, LaunchedProcess> out;
  if (adopted.empty()) return out;
  std::map<int, std::string> recorded;  // pid -> identity
  if (auto rows = store.GetReplicas(app_id); rows.ok()) {
    for (const ReplicaRecord& r : *rows) recorded[r.pid] = r.proc_start;
    writer.AlreadyWritten(*rows);
  }
  for (size_t i = 0; i < adopted.size(); ++i) {
    const AdoptedReplica& a = adopted[i];
    const ReplicaPlan& rp = plan.replicas[i];
    LaunchedProcess p;
    p.pid = a.pid;
    auto known = recorded.find(a.pid);
    p.identity = known != recorded.end() ? known->second : ProcessIdentity(a.pid);
    p.out_fd = MoveFdHigh(a.out_fd);
    p.err_fd = MoveFdHigh(a.err_fd);
    for (int fd : {p.out_fd, p.err_fd}) {
      fcntl(fd, F_SETFD, FD_CLOEXEC);
      fcntl(fd, F_SETFL, O_NONBLOCK);
    }
    if (a.exec_errno != 0) p.exec_error = ExecErrorText(rp, a.exec_errno);
    out.emplace(std::pair{rp.role, rp.replica_id}, std::move(p));
  }
  return out;
}

// Runs a loaded app to its end: `adopted` (may be empty) are replicas started already, whose
// rows the writer has.
int RunLoaded(StateStore& store, const std::string& state_dir, AppRecord app, AppPlan plan,
              std::map<std::pair<std::string, int>, LaunchedProcess> adopted, StateStoreWriter& writer, int ready_fd,
              Watchdog& watchdog) {
  (void)internal::CreatePrivateDirs(plan.app_dir);
  // The start writes a row per replica two or three times: checkpointing the WAL in the middle
  // would put its fsyncs between the launcher and RUNNING. Back to the usual threshold at the first
  // resource sample, and a checkpoint after the end (Supervisor).
  store.SetWalCheckpointPages(kBurstCheckpointPages);
  bool was_adopted = !adopted.empty();
  CloneLauncher clone_launcher;
  AdoptingLauncher launcher(clone_launcher, std::move(adopted));
  SystemClock clock;
  Supervisor sup(store, state_dir, std::move(app), std::move(plan), launcher, writer, clock, watchdog);
  return sup.Run(ready_fd, was_adopted);
}

// One app of the store, on a store already open.
int RunApp(StateStore& store, const std::string& state_dir, const std::string& app_id, int ready_fd,
           const std::vector<AdoptedReplica>& adopted, Watchdog* watchdog) {
  Watchdog own;
  if (!watchdog) watchdog = &own;
  auto app = store.GetApp(app_id);
  if (!app || !*app) {
    std::fprintf(stderr, "torchx-supervisor: app %s not found in %s\n", app_id.c_str(), state_dir.c_str());
    StopAdopted(adopted);
    return 1;
  }
  auto plan = AppPlanFromJson((**app).plan_json);
  if (plan && !adopted.empty() && adopted.size() != plan->replicas.size()) {
    plan = InternalError(
        fmt::format("torchx-supervisor: {} replicas started for a plan of {}", adopted.size(), plan->replicas.size()));
  }
  if (!plan) {
    StopAdopted(adopted);
    (void)store.SetAppState(app_id, AppState::kFailed, 0, plan.error().message(), "<NONE>", FailureCause::kUnknown);
    return 1;
  }
  StateStoreWriter writer(store, app_id);
  auto handed = Adopt(store, app_id, *plan, adopted, writer);
  return RunLoaded(store, state_dir, std::move(**app), std::move(*plan), std::move(handed), writer, ready_fd,
                   *watchdog);
}

void StopLaunched(std::vector<LaunchedProcess>& launched) {
  for (LaunchedProcess& p : launched) {
    // Our unreaped children: their pids (and groups' ids) cannot have been reused.
    kill(-p.pid, SIGKILL);
    kill(p.pid, SIGKILL);
    while (waitpid(p.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    for (int fd : {p.out_fd, p.err_fd}) {
      if (fd >= 0) ::close(fd);
    }
  }
  launched.clear();
}

// A warm supervisor's next app (warm_supervisor.h): its replicas started here, the app recorded
// RUNNING with them and this process in one transaction, the caller told, then the app run as
// an adopted one. Refused (and said why) with nothing left running or recorded. Returns the exit
// code the process would have; non-zero ends the warm service.
int RunWarmApp(StateStore& store, const std::string& state_dir, WarmRequest req, int link) {
  AppRecord rec = RunningRecordOf(req);
  rec.supervisor_pid = getpid();
  rec.supervisor_start = SelfIdentity();
  auto refuse = [&](const std::string& why) {
    (void)SendAll(link, std::string(1, kWarmRefused) + why + "\n");
    return 1;
  };
  auto plan = AppPlanFromJson(rec.plan_json);
  if (!plan) return refuse(plan.error().message());
  if (plan->app_dir != rec.app_dir || plan->replicas.empty() || plan->replicas.size() > kDetachedStartMaxReplicas) {
    return refuse(fmt::format("torchx-supervisor: app {}: not a plan a warm supervisor takes", rec.app_id));
  }
  ReplaceEnvironment(req.env);
  // The replica's error file is in its directory: there before it starts.
  for (const auto& [role, _] : plan->roles)
    (void)internal::CreatePrivateDirs((fs::path(plan->app_dir) / role).string());
  for (const ReplicaPlan& rp : plan->replicas) MakeReplicaDir(rp.log_dir);
  CloneLauncher launcher;
  std::vector<LaunchedProcess> launched;
  std::vector<ReplicaRecord> rows;
  for (const ReplicaPlan& rp : plan->replicas) {
    auto p = launcher.Launch(rp);
    if (!p) {
      StopLaunched(launched);
      return refuse(p.error().message());
    }
    rows.push_back(
        {rec.app_id, rp.role, rp.replica_id, 0, p->pid, p->identity, AppState::kRunning, std::nullopt, "<NONE>"});
    launched.push_back(std::move(*p));
  }
  store.SetWalCheckpointPages(kBurstCheckpointPages);
  if (Status s = store.InsertStartedApp(rec, rows); !s.ok()) {
    StopLaunched(launched);
    return refuse(s.message());
  }
  (void)SendAll(link, std::string_view(&kWarmStarted, 1));
  std::map<std::pair<std::string, int>, LaunchedProcess> adopted;
  for (size_t i = 0; i < launched.size(); ++i) {
    const ReplicaPlan& rp = plan->replicas[i];
    adopted.emplace(std::pair{rp.role, rp.replica_id}, std::move(launched[i]));
  }
  StateStoreWriter writer(store, rec.app_id);
  writer.AlreadyWritten(rows);
  Watchdog watchdog;
  return RunLoaded(store, state_dir, std::move(rec), std::move(*plan), std::move(adopted), writer, -1, watchdog);
}

// After its first app, a supervisor started by the caller of `run` takes that caller's next
// apps while it waits for them (warm_supervisor.h); it exits when none comes, or when one of
// them could not be run.
int ServeWarmApps(StateStore& store, const std::string& state_dir, int link) {
  while (true) {
    // Between apps, its diagnostics belong to no app's log.
    if (int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC); devnull >= 0) {
      dup2(devnull, 1);
      dup2(devnull, 2);
      ::close(devnull);
    }
    std::optional<WarmRequest> next = AwaitNextApp(link, kWarmLingerMs);
    if (!next) return 0;
    if (int rc = RunWarmApp(store, state_dir, std::move(*next), link); rc != 0) return rc;
  }
}

}  // namespace

int RunSupervisor(const std::string& state_dir, const std::string& app_id, int ready_fd,
                  const std::vector<AdoptedReplica>& adopted, Watchdog* watchdog) {
  auto store = StateStore::Open(state_dir);
  if (!store) {
    std::fprintf(stderr, "torchx-supervisor: %s\n", store.error().message().c_str());
    StopAdopted(adopted);
    return 1;
  }
  return RunApp(**store, state_dir, app_id, ready_fd, adopted, watchdog);
}

int SupervisorMain(int argc, char** argv) {
  if (argc == 5 && std::string_view(argv[1]) == "--adopt") {
    // Started by the caller of `run` with the replicas already running (detached_start.h): in its
    // own session with stdio on /dev/null already. The store is the caller's until it says the
    // app is recorded.
    int fd = -1;
    std::string_view arg(argv[2]);
    if (std::from_chars(arg.data(), arg.data() + arg.size(), fd).ec != std::errc() || fd < 0) return 2;
    AdoptionReader reader(fd);
    auto replicas = reader.Replicas();
    if (!replicas) return 1;  // the replicas, if any, die with this process (PDEATHSIG)
    // The watchdog first: from here a killed supervisor takes its replicas' groups with it.
    Watchdog watchdog;
    watchdog.Start(argv[3], argv[4], -1);
    for (const AdoptedReplica& r : *replicas) {
      if (std::string identity = ProcessIdentity(r.pid); !identity.empty()) watchdog.ReplicaStarted(r.pid, identity);
    }
    if (!reader.Committed()) {
      StopAdopted(*replicas);
      watchdog.Done();
      return 1;
    }
    auto store = StateStore::Open(argv[3]);
    if (!store) {
      std::fprintf(stderr, "torchx-supervisor: %s\n", store.error().message().c_str());
      StopAdopted(*replicas);
      return 1;
    }
    int rc = RunApp(**store, argv[3], argv[4], -1, *replicas, &watchdog);
    watchdog.Close();
    if (rc != 0) return rc;
    int link = reader.TakeLink();
    rc = ServeWarmApps(**store, argv[3], link);
    ::close(link);
    return rc;
  }
  if (argc != 3) {
    std::fprintf(stderr, "usage: torchx-supervisor <state_dir> <app_id>\n");
    return 2;
  }
  // The launcher reaps the first process at once; it exits when the supervisor is running.
  int launcher_exit = 1;
  int ready_fd = internal::ForkUntilReady(launcher_exit);
  if (ready_fd < 0) return launcher_exit;
  if (getsid(0) != getpid()) setsid();
  int devnull = ::open("/dev/null", O_RDWR);
  if (devnull >= 0) {
    for (int fd : {0, 1, 2}) dup2(devnull, fd);
    if (devnull > 2) ::close(devnull);
  }
  return RunSupervisor(argv[1], argv[2], ready_fd);
}

}  // namespace torchx::schedulers::local
