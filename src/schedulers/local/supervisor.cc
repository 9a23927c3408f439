#include "schedulers/local/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "schedulers/local/app_plan.h"
#include "schedulers/local/process_identity.h"
#include "schedulers/local/state_store.h"

extern char** environ;

namespace torchx::schedulers::local {
namespace {

namespace fs = std::filesystem;
using specs::AppState;

struct Replica {
  const ReplicaPlan* plan = nullptr;
  int attempt = 0;
  pid_t pid = 0;
  std::string identity;
  bool running = false;
  int out_pipe = -1, err_pipe = -1;
  int out_file = -1, err_file = -1, combined_file = -1;
  std::string out_partial, err_partial;  // unterminated lines held back from combined.log
  AppState state = AppState::kPending;
  std::optional<int> exit_code;
  std::string structured_error = "<NONE>";
  bool counted_success = false;  // included in Supervisor::succeeded_
  bool logs_created = false;     // this attempt's log files exist
};

void WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // a full disk loses log output, never the app
    data += w;
    n -= static_cast<size_t>(w);
  }
}

std::string ReadFileOr(const std::string& path, const std::string& fallback) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fallback;
  std::stringstream buf;
  buf << in.rdbuf();
  std::string s = buf.str();
  return s.empty() ? fallback : s;
}

// The supervisor's own guard. Forked first, it holds the read end of a pipe whose write end only
// the supervisor has; the supervisor sends "<pgid> <identity>" for each replica it starts and
// "done" when it has finished. EOF without "done" means the supervisor was killed: the watchdog
// kills every replica process group (children of the replicas included, which PDEATHSIG alone
// does not reach) and records the app as FAILED, so nothing outlives a lost supervisor.
[[noreturn]] void RunWatchdog(int fd, const std::string& state_dir, const std::string& app_id) {
  signal(SIGTERM, SIG_IGN);  // a cancel signals the supervisor, not its guard
  signal(SIGINT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  std::map<int, std::string> groups;
  std::string buf;
  char chunk[4096];
  bool done = false;
  while (true) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
    size_t nl;
    while ((nl = buf.find('\n')) != std::string::npos) {
      std::string line = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      if (line == "done") {
        done = true;
        continue;
      }
      size_t sp = line.find(' ');
      if (sp != std::string::npos) groups[std::atoi(line.c_str())] = line.substr(sp + 1);
    }
  }
  if (!done) {
    for (const auto& [pgid, identity] : groups) SignalGroupOrLeftovers(pgid, identity, SIGKILL);
    if (auto store = StateStore::Open(state_dir); store) {
      if (auto replicas = (*store)->GetReplicas(app_id); replicas) {
        for (ReplicaRecord& r : *replicas) {
          if (!specs::IsTerminal(r.state)) r.state = AppState::kFailed;
        }
        (void)(*store)->PutReplicas(*replicas);
      }
      (void)(*store)->SetAppState(app_id, AppState::kFailed, 0,
                                  "the app's supervisor died unexpectedly; its replicas were stopped", "<NONE>");
    }
  }
  _exit(0);
}

// What the child of Spawn needs; it lives in the supervisor's memory, which a CLONE_VM child
// shares, so the child reports an exec failure by writing `error` before it exits.
struct ChildArgs {
  const char* path;
  char* const* argv;
  char* const* envp;
  const char* cwd;
  int out_fd;
  int err_fd;
  pid_t supervisor;
  int error = 0;
};

// Runs in the child between clone and exec. It shares the parent's memory (the parent is
// suspended until exec or exit), so it only makes system calls.
int ChildMain(void* p) {
  auto* a = static_cast<ChildArgs*>(p);
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // replica leaders never outlive a killed supervisor
  if (getppid() != a->supervisor) _exit(127);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGPIPE, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(a->out_fd, 1) < 0 || dup2(a->err_fd, 2) < 0) {
    a->error = errno;
    _exit(127);
  }
  if (chdir(a->cwd) != 0) {
    a->error = errno;
    _exit(127);
  }
  execve(a->path, a->argv, a->envp);
  a->error = errno;
  _exit(127);
}

// The program execvp would run for `name` on `path_var`, resolved once per (name, PATH, cwd)
// instead of probing every PATH directory in every replica. Relative PATH entries are relative
// to the replica's cwd.
std::string ResolveProgram(const std::string& name, const std::string& path_var, const std::string& cwd) {
  if (name.find('/') != std::string::npos) return name;
  size_t start = 0;
  while (start <= path_var.size()) {
    size_t colon = path_var.find(':', start);
    if (colon == std::string::npos) colon = path_var.size();
    std::string dir = path_var.substr(start, colon - start);
    if (dir.empty()) dir = ".";
    std::string candidate = (dir[0] == '/' ? dir : cwd + "/" + dir) + "/" + name;
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = colon + 1;
  }
  return name;  // not found: execve reports ENOENT, as execvp would
}

class Supervisor {
 public:
  Supervisor(StateStore& store, std::string state_dir, AppRecord app, AppPlan plan)
      : store_(store), state_dir_(std::move(state_dir)), app_(std::move(app)), plan_(std::move(plan)) {
    for (const ReplicaPlan& rp : plan_.replicas) {
      Replica r;
      r.plan = &rp;
      replicas_.push_back(std::move(r));
    }
  }

  int Run(int ready_fd) {
    StartWatchdog(ready_fd);
    if (Status s = Setup(); !s.ok()) {
      (void)Finish(AppState::kFailed, s.message());
      return 1;
    }
    (void)(store_.SetSupervisor(app_.app_id, getpid(), ProcessIdentity(getpid())));
    std::error_code ec;
    for (const auto& [role, _] : plan_.roles) fs::create_directories(fs::path(plan_.app_dir) / role, ec);
    // A cancel that arrived before the pid above was recorded could not signal us; it left a
    // flag. Reading it after recording the pid closes that window: one side sees the other.
    if (auto fresh = store_.GetApp(app_.app_id); fresh && *fresh && (*fresh)->cancel_requested) {
      (void)Finish(AppState::kCancelled, "cancelled before it started");
      if (ready_fd >= 0) {
        WriteAll(ready_fd, "R", 1);
        ::close(ready_fd);
      }
      TellWatchdog("done");
      return 0;
    }
    for (size_t i = 0; i < replicas_.size(); ++i) Spawn(i);
    for (size_t i = 0; i < replicas_.size(); ++i) CreateLogFiles(i);
    FlushReplicas();
    if (!final_state_) SetState(AppState::kRunning, "");
    if (ready_fd >= 0) {
      WriteAll(ready_fd, "R", 1);
      ::close(ready_fd);
    }
    Loop();
    return 0;
  }

 private:

  void StartWatchdog(int ready_fd) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return;  // without a guard, readers still detect the loss
    pid_t pid = fork();
    if (pid == 0) {
      ::close(fds[1]);
      if (ready_fd >= 0) ::close(ready_fd);  // the launcher must see EOF if the supervisor fails
      RunWatchdog(fds[0], state_dir_, app_.app_id);
    }
    ::close(fds[0]);
    if (pid < 0) {
      ::close(fds[1]);
      return;
    }
    watchdog_fd_ = fds[1];
  }

  void TellWatchdog(const std::string& line) {
    if (watchdog_fd_ >= 0) WriteAll(watchdog_fd_, (line + "\n").data(), line.size() + 1);
  }

  Status Setup() {
    // Every replica needs two pipes and three log files: lift the soft fd limit to the hard one.
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
      lim.rlim_cur = lim.rlim_max;
      setrlimit(RLIMIT_NOFILE, &lim);
    }
    sigset_t mask;
    sigemptyset(&mask);
    for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&mask, sig);
    if (sigprocmask(SIG_BLOCK, &mask, nullptr) != 0) return InternalError("sigprocmask failed");
    signal(SIGPIPE, SIG_IGN);
    sigfd_ = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    timerfd_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    if (sigfd_ < 0 || timerfd_ < 0 || epfd_ < 0) return InternalError(fmt::format("supervisor setup: {}", strerror(errno)));
    Watch(sigfd_);
    Watch(timerfd_);
    return OkStatus();
  }

  void Watch(int fd) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
  }

  static int OpenLog(const fs::path& p) {
    return ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_APPEND, 0644);
  }

  // The replica's log file, opened for appending on first use.
  static int LogFd(const Replica& r, int& fd, const char* name) {
    if (fd < 0) fd = ::open((fs::path(r.plan->log_dir) / name).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    return fd;
  }

  // Keeps an earlier attempt's logs: <replica dir>/attempt_<n>/{stdout,stderr,combined}.log.
  static void ArchiveAttempt(const fs::path& dir, int attempt) {
    std::error_code ec;
    fs::path dst = dir / fmt::format("attempt_{}", attempt);
    fs::create_directories(dst, ec);
    for (const char* name : {"stdout.log", "stderr.log", "combined.log", "error.json"}) {
      if (fs::exists(dir / name, ec)) fs::rename(dir / name, dst / name, ec);
    }
  }

  // Creates (and truncates) a replica's log files, as TorchX's layout promises them, holding no
  // fd until output arrives: every exec copies and closes the supervisor's whole fd table, so a
  // quiet replica should cost it no more than its two pipes. Called right after the spawn (the
  // pipes are only read once this is done), so creation overlaps the replicas' start-up.
  void CreateLogFiles(size_t i) {
    if (replicas_[i].logs_created) return;
    replicas_[i].logs_created = true;
    fs::path dir(replicas_[i].plan->log_dir);
    for (const char* name : {"stdout.log", "stderr.log", "combined.log"}) {
      int fd = OpenLog(dir / name);
      if (fd >= 0) ::close(fd);
    }
  }

  void Spawn(size_t i) {
    Replica& r = replicas_[i];
    const ReplicaPlan& p = *r.plan;
    fs::path dir(p.log_dir);
    std::error_code ec;
    // One mkdir in the common case; the full walk only when a parent is missing.
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) fs::create_directories(dir, ec);
    if (r.attempt > 0) {
      ArchiveAttempt(dir, r.attempt - 1);
      fs::remove(p.error_file, ec);
    }
    r.out_partial.clear();
    r.err_partial.clear();
    r.logs_created = false;
    r.exit_code.reset();
    r.structured_error = "<NONE>";

    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
      MarkSpawnFailed(i, fmt::format("cannot create pipes: {}", strerror(errno)));
      return;
    }
    // The supervisor's environment with the replica's variables on top.
    std::vector<std::string> overrides;
    overrides.reserve(p.env.size());
    for (const auto& [k, v] : p.env) overrides.push_back(k + "=" + v);
    std::vector<char*> envp, argv;
    envp.reserve(BaseEnv().size() + overrides.size() + 1);
    for (auto& [key, entry] : BaseEnv()) {
      if (!p.env.count(key)) envp.push_back(entry.data());
    }
    for (std::string& e : overrides) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = p.argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    auto path_it = p.env.find("PATH");
    std::string path_var = path_it != p.env.end() ? path_it->second
                           : BaseEnv().count("PATH") ? BaseEnv().at("PATH").substr(5) : "";
    std::string key = p.argv[0] + '\0' + path_var + '\0' + p.cwd;
    auto cached = resolved_.find(key);
    if (cached == resolved_.end()) cached = resolved_.emplace(key, ResolveProgram(p.argv[0], path_var, p.cwd)).first;

    ChildArgs child{cached->second.c_str(), argv.data(), envp.data(), p.cwd.c_str(), out[1], err[1], getpid()};
    // CLONE_VFORK: we resume once the child has exec'd (or failed), so `child` stays valid and
    // holds the exec error; CLONE_VM: no page tables to copy, unlike fork.
    pid_t pid = clone(&ChildMain, child_stack_top_, CLONE_VM | CLONE_VFORK | SIGCHLD, &child);
    ::close(out[1]);
    ::close(err[1]);
    if (pid < 0) {
      ::close(out[0]);
      ::close(err[0]);
      MarkSpawnFailed(i, fmt::format("cannot start a process: {}", strerror(errno)));
      return;
    }
    r.pid = pid;
    by_pid_[pid] = i;
    r.identity = ProcessIdentity(pid);
    TellWatchdog(fmt::format("{} {}", pid, r.identity));
    r.running = true;
    r.state = AppState::kRunning;
    r.out_pipe = out[0];
    r.err_pipe = err[0];
    fcntl(r.out_pipe, F_SETFL, O_NONBLOCK);
    fcntl(r.err_pipe, F_SETFL, O_NONBLOCK);
    Watch(r.out_pipe);
    Watch(r.err_pipe);
    pipe_owner_[r.out_pipe] = {i, false};
    pipe_owner_[r.err_pipe] = {i, true};
    if (child.error != 0) {
      std::string why = fmt::format("{}: cannot start `{}` in {}: {}", Label(i), p.argv[0], p.cwd, strerror(child.error));
      CreateLogFiles(i);
      WriteAll(LogFd(r, r.err_file, "stderr.log"), (why + "\n").data(), why.size() + 1);
      WriteAll(LogFd(r, r.combined_file, "combined.log"), (why + "\n").data(), why.size() + 1);
      if (spawn_error_.empty()) spawn_error_ = why;
    }
    dirty_.insert(i);
  }

  // The supervisor's own environment (the submitter's): name -> "NAME=value", parsed once.
  std::map<std::string, std::string>& BaseEnv() {
    if (base_env_.empty()) {
      for (char** e = environ; *e; ++e) {
        std::string kv(*e);
        size_t eq = kv.find('=');
        if (eq != std::string::npos) base_env_[kv.substr(0, eq)] = kv;
      }
    }
    return base_env_;
  }

  void MarkSpawnFailed(size_t i, const std::string& why) {
    Replica& r = replicas_[i];
    r.running = false;
    r.state = AppState::kFailed;
    r.exit_code = 127;
    if (spawn_error_.empty()) spawn_error_ = fmt::format("{}: {}", Label(i), why);
    dirty_.insert(i);
    OnExit(i);
  }

  std::string Label(size_t i) const {
    return fmt::format("{}/{}", replicas_[i].plan->role, replicas_[i].plan->replica_id);
  }

  void Loop() {
    epoll_event events[64];
    while (!done_) {
      int n = epoll_wait(epfd_, events, 64, -1);
      if (n < 0 && errno == EINTR) continue;
      for (int k = 0; k < n; ++k) {
        int fd = events[k].data.fd;
        if (fd == sigfd_) {
          OnSignals();
        } else if (fd == timerfd_) {
          uint64_t expirations;
          ssize_t ignored = ::read(timerfd_, &expirations, sizeof(expirations));
          (void)ignored;
          OnGraceExpired();
        } else {
          OnPipe(fd);
        }
      }
      FlushReplicas();
      if (final_state_ && !AnyRunning()) Finalize();
    }
  }

  void OnSignals() {
    signalfd_siginfo si;
    bool child = false;
    while (::read(sigfd_, &si, sizeof(si)) == sizeof(si)) {
      if (si.ssi_signo == SIGCHLD) {
        child = true;
      } else {
        BeginStop(AppState::kCancelled, fmt::format("cancelled (signal {})", si.ssi_signo));
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
      {
        Replica& r = replicas_[i];
        if (!r.running) continue;
        r.running = false;
        // Python's convention, which TorchX reports: a negative code is the killing signal.
        r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
        r.state = *r.exit_code == 0 ? AppState::kSucceeded : AppState::kFailed;
        if (final_state_ == AppState::kCancelled) r.state = AppState::kCancelled;
        if (r.state == AppState::kFailed) r.structured_error = ReadFileOr(r.plan->error_file, "<NONE>");
        dirty_.insert(i);
        OnExit(i);
      }
    }
  }

  void OnPipe(int fd) {
    auto it = pipe_owner_.find(fd);
    if (it == pipe_owner_.end()) return;
    auto [i, is_err] = it->second;
    Replica& r = replicas_[i];
    char buf[65536];
    while (true) {
      ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n > 0) {
        WriteAll(is_err ? LogFd(r, r.err_file, "stderr.log") : LogFd(r, r.out_file, "stdout.log"), buf,
                 static_cast<size_t>(n));
        AppendCombined(r, is_err, std::string_view(buf, static_cast<size_t>(n)));
        continue;
      }
      if (n < 0 && (errno == EINTR)) continue;
      if (n < 0 && errno == EAGAIN) return;
      ClosePipe(fd);  // EOF or error
      return;
    }
  }

  // combined.log receives whole lines only, so stdout and stderr lines never interleave mid-line.
  void AppendCombined(Replica& r, bool is_err, std::string_view data) {
    std::string& partial = is_err ? r.err_partial : r.out_partial;
    size_t last_nl = data.rfind('\n');
    int combined = LogFd(r, r.combined_file, "combined.log");
    if (last_nl == std::string_view::npos) {
      partial.append(data);
      if (partial.size() > (1 << 20)) {  // a megabyte with no newline: write it anyway
        WriteAll(combined, partial.data(), partial.size());
        partial.clear();
      }
      return;
    }
    partial.append(data.substr(0, last_nl + 1));
    WriteAll(combined, partial.data(), partial.size());
    partial.assign(data.substr(last_nl + 1));
  }

  void ClosePipe(int fd) {
    auto it = pipe_owner_.find(fd);
    if (it == pipe_owner_.end()) return;
    auto [i, is_err] = it->second;
    Replica& r = replicas_[i];
    std::string& partial = is_err ? r.err_partial : r.out_partial;
    if (!partial.empty()) {
      WriteAll(LogFd(r, r.combined_file, "combined.log"), partial.data(), partial.size());
      partial.clear();
    }
    epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    (is_err ? r.err_pipe : r.out_pipe) = -1;
    pipe_owner_.erase(it);
  }

  void CloseReplicaFiles(Replica& r) {
    for (int* fd : {&r.out_pipe, &r.err_pipe}) {
      if (*fd >= 0) {
        OnPipe(*fd);
        if (*fd >= 0) ClosePipe(*fd);
      }
    }
    for (int* fd : {&r.out_file, &r.err_file, &r.combined_file}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
  }

  void OnExit(size_t i) {
    Replica& r = replicas_[i];
    if (final_state_) return;  // stopping: Finalize runs once nothing is left
    if (restart_set_.count(i)) {
      MaybeRestart();
      return;
    }
    if (r.state == AppState::kSucceeded) {
      if (!r.counted_success) {
        r.counted_success = true;
        ++succeeded_;
      }
      if (succeeded_ == replicas_.size()) BeginStop(AppState::kSucceeded, "");
      return;
    }
    const RolePolicy& policy = plan_.roles.at(r.plan->role);
    std::string why = spawn_error_.empty()
        ? fmt::format("{} exited with code {}", Label(i), r.exit_code.value_or(-1))
        : spawn_error_;
    if (role_restarts_[r.plan->role] >= policy.max_retries) {
      BeginStop(AppState::kFailed, why);
      return;
    }
    role_restarts_[r.plan->role]++;
    num_restarts_++;
    spawn_error_.clear();
    for (size_t k = 0; k < replicas_.size(); ++k) {
      bool in_set = policy.retry_policy == specs::RetryPolicy::kApplication ||
                    (policy.retry_policy == specs::RetryPolicy::kRole && replicas_[k].plan->role == r.plan->role) ||
                    k == i;
      if (!in_set) continue;
      restart_set_.insert(k);
      if (replicas_[k].running) SignalReplica(k, SIGTERM);
    }
    SetState(AppState::kRunning, fmt::format("restarting after {} (restart {})", why, num_restarts_));
    ArmGrace();
    MaybeRestart();
  }

  void MaybeRestart() {
    for (size_t k : restart_set_) {
      if (replicas_[k].running) return;
    }
    std::set<size_t> set = std::move(restart_set_);
    restart_set_.clear();
    DisarmGrace();
    for (size_t k : set) {
      Replica& r = replicas_[k];
      if (r.counted_success) {
        r.counted_success = false;
        --succeeded_;
      }
      SignalReplica(k, SIGKILL);  // leftovers of the old attempt's process group
      CloseReplicaFiles(r);
      r.attempt++;
      Spawn(k);
      CreateLogFiles(k);
    }
  }

  void SignalReplica(size_t i, int sig) {
    const Replica& r = replicas_[i];
    if (r.pid > 0) SignalGroupOrLeftovers(r.pid, r.identity, sig);
  }

  void BeginStop(AppState final_state, const std::string& msg) {
    if (final_state_) return;
    final_state_ = final_state;
    final_msg_ = msg;
    restart_set_.clear();
    for (size_t i = 0; i < replicas_.size(); ++i) {
      if (replicas_[i].running) {
        SignalReplica(i, SIGTERM);
        if (final_state == AppState::kCancelled) replicas_[i].state = AppState::kCancelled;
      }
    }
    if (AnyRunning()) ArmGrace();
  }

  void ArmGrace() {
    itimerspec t{};
    double g = plan_.kill_grace_seconds;
    t.it_value.tv_sec = static_cast<time_t>(g);
    t.it_value.tv_nsec = static_cast<long>((g - static_cast<double>(t.it_value.tv_sec)) * 1e9);
    if (t.it_value.tv_sec == 0 && t.it_value.tv_nsec == 0) t.it_value.tv_nsec = 1;
    timerfd_settime(timerfd_, 0, &t, nullptr);
  }
  void DisarmGrace() {
    itimerspec t{};
    timerfd_settime(timerfd_, 0, &t, nullptr);
  }

  void OnGraceExpired() {
    for (size_t i = 0; i < replicas_.size(); ++i) {
      if (replicas_[i].running) SignalReplica(i, SIGKILL);
    }
  }

  bool AnyRunning() const {
    for (const Replica& r : replicas_) {
      if (r.running) return true;
    }
    return false;
  }

  void SetState(AppState state, const std::string& msg) {
    std::string err = "<NONE>";
    // The app's structured error is the earliest replica error file, as TorchX reports it.
    fs::file_time_type earliest = fs::file_time_type::max();
    std::error_code ec;
    for (const Replica& r : replicas_) {
      if (r.structured_error == "<NONE>") continue;
      auto t = fs::last_write_time(r.plan->error_file, ec);
      if (ec) t = fs::file_time_type::max() - fs::file_time_type::duration(1);
      if (t < earliest || err == "<NONE>") {
        earliest = t;
        err = r.structured_error;
      }
    }
    (void)(store_.SetAppState(app_.app_id, state, num_restarts_, msg, err).status());
  }

  void FlushReplicas() {
    if (dirty_.empty()) return;
    std::vector<ReplicaRecord> rows;
    for (size_t i : dirty_) {
      const Replica& r = replicas_[i];
      ReplicaRecord rec;
      rec.app_id = app_.app_id;
      rec.role = r.plan->role;
      rec.replica_id = r.plan->replica_id;
      rec.attempt = r.attempt;
      rec.pid = r.pid;
      rec.proc_start = r.identity;
      rec.state = r.state;
      rec.exit_code = r.exit_code;
      rec.structured_error_msg = r.structured_error;
      rows.push_back(std::move(rec));
    }
    dirty_.clear();
    (void)(store_.PutReplicas(rows));
  }

  void Finalize() {
    // Drain what the replicas wrote before exiting (bounded: a stray background process may hold
    // a pipe open), then make sure nothing of the app is left running.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    epoll_event events[64];
    while (!pipe_owner_.empty() && std::chrono::steady_clock::now() < deadline) {
      int n = epoll_wait(epfd_, events, 64, 100);
      for (int k = 0; k < n; ++k) {
        if (pipe_owner_.count(events[k].data.fd)) OnPipe(events[k].data.fd);
      }
    }
    for (size_t i = 0; i < replicas_.size(); ++i) {
      SignalReplica(i, SIGKILL);
      CloseReplicaFiles(replicas_[i]);
    }
    for (Replica& r : replicas_) {
      if (r.state == AppState::kRunning || r.state == AppState::kPending) {
        r.state = *final_state_ == AppState::kCancelled ? AppState::kCancelled : AppState::kFailed;
      }
      dirty_.insert(static_cast<size_t>(&r - replicas_.data()));
    }
    FlushReplicas();
    // The summary goes first: a reader that sees the terminal state must find it.
    WriteSummary();
    SetState(*final_state_, final_msg_);
    TellWatchdog("done");
    done_ = true;
  }

  // TorchX's local scheduler leaves a summary JSON named SUCCESS in the app dir when it ends.
  void WriteSummary() {
    nlohmann::json roles = nlohmann::json::object();
    for (const Replica& r : replicas_) {
      const fs::path dir(r.plan->log_dir);
      roles[r.plan->role].push_back({{"replica_id", r.plan->replica_id}, {"pid", r.pid},
                                     {"exitcode", r.exit_code ? nlohmann::json(*r.exit_code) : nlohmann::json()},
                                     {"stdout", (dir / "stdout.log").string()}, {"stderr", (dir / "stderr.log").string()},
                                     {"error_file", r.plan->error_file}});
    }
    nlohmann::json j = {{"app_id", app_.app_id}, {"log_dir", plan_.app_dir},
                        {"final_state", std::string(specs::AppStateName(*final_state_))},
                        {"last_updated", NowSeconds()}, {"roles", roles}};
    std::ofstream(fs::path(plan_.app_dir) / "SUCCESS") << j.dump(2) << "\n";
  }

  Status Finish(AppState state, const std::string& msg) {
    return store_.SetAppState(app_.app_id, state, num_restarts_, msg, "<NONE>").status();
  }

  StateStore& store_;
  std::string state_dir_;
  AppRecord app_;
  AppPlan plan_;
  std::vector<Replica> replicas_;
  std::map<int, std::pair<size_t, bool>> pipe_owner_;  // fd -> (replica, is stderr)
  std::map<pid_t, size_t> by_pid_;                     // running leader -> replica
  size_t succeeded_ = 0;
  std::set<size_t> dirty_;
  std::set<size_t> restart_set_;
  std::map<std::string, int> role_restarts_;
  int num_restarts_ = 0;
  std::optional<AppState> final_state_;
  std::string final_msg_;
  std::string spawn_error_;
  int epfd_ = -1, sigfd_ = -1, timerfd_ = -1;
  int watchdog_fd_ = -1;
  bool done_ = false;
  std::map<std::string, std::string> base_env_;
  std::map<std::string, std::string> resolved_;  // program lookups, see ResolveProgram
  std::vector<char> child_stack_ = std::vector<char>(256 * 1024);
  char* child_stack_top_ = child_stack_.data() + child_stack_.size();
};

}  // namespace

int RunSupervisor(const std::string& state_dir, const std::string& app_id, int ready_fd) {
  auto store = StateStore::Open(state_dir);
  if (!store) {
    std::fprintf(stderr, "torchx-supervisor: %s\n", store.error().message().c_str());
    return 1;
  }
  auto app = (*store)->GetApp(app_id);
  if (!app || !*app) {
    std::fprintf(stderr, "torchx-supervisor: app %s not found in %s\n", app_id.c_str(), state_dir.c_str());
    return 1;
  }
  auto plan = AppPlanFromJson((**app).plan_json);
  if (!plan) {
    (void)(*store)->SetAppState(app_id, AppState::kFailed, 0, plan.error().message(), "<NONE>");
    return 1;
  }
  // From here on the supervisor's own diagnostics go to <app_dir>/supervisor.log; it must not
  // hold the launcher's stdout open (a caller reading `$(torchx run ...)` would never see EOF).
  std::error_code ec;
  fs::create_directories(plan->app_dir, ec);
  int log = ::open((fs::path(plan->app_dir) / "supervisor.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log >= 0) {
    dup2(log, 1);
    dup2(log, 2);
    ::close(log);
  }
  Supervisor sup(**store, state_dir, std::move(**app), std::move(*plan));
  return sup.Run(ready_fd);
}

int SupervisorMain(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: torchx-supervisor <state_dir> <app_id>\n");
    return 2;
  }
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return 1;
  pid_t child = fork();
  if (child < 0) return 1;
  if (child > 0) {
    // The launcher reaps this process at once; it exits when the supervisor is running.
    ::close(ready[1]);
    char c = 0;
    ssize_t n;
    do {
      n = ::read(ready[0], &c, 1);
    } while (n < 0 && errno == EINTR);
    return n == 1 ? 0 : 1;
  }
  ::close(ready[0]);
  if (getsid(0) != getpid()) setsid();
  int devnull = ::open("/dev/null", O_RDWR);
  if (devnull >= 0) {
    for (int fd : {0, 1, 2}) dup2(devnull, fd);
    if (devnull > 2) ::close(devnull);
  }
  return RunSupervisor(argv[1], argv[2], ready[1]);
}

}  // namespace torchx::schedulers::local
