// The local supervisor's watchdog process and its line protocol (see watchdog.h).
#include "schedulers/local/watchdog.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include "schedulers/local/app_plan.h"
#include "schedulers/local/end_summary.h"
#include "schedulers/local/failure_cause.h"
#include "schedulers/local/process_identity.h"
#include "schedulers/local/state_store.h"

namespace torchx::schedulers::local {
namespace {

[[noreturn]] void RunWatchdog(int fd, const std::string& state_dir, const std::string& app_id) {
  signal(SIGTERM, SIG_IGN);  // a cancel signals the supervisor, not its guard
  signal(SIGINT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  sigset_t none;  // a supervisor started by the caller of `run` blocks its signals from birth
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  WatchdogLog log;
  char chunk[4096];
  while (true) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    log.Feed(std::string_view(chunk, static_cast<size_t>(n)));
  }
  if (!log.done()) {
    for (const auto& [pgid, identity] : log.groups()) SignalGroupOrLeftovers(pgid, identity, SIGKILL);
    if (auto store = StateStore::Open(state_dir); store) {
      auto replicas = (*store)->GetReplicas(app_id);
      if (replicas.ok()) {
        for (ReplicaRecord& r : *replicas) {
          if (!specs::IsTerminal(r.state)) r.state = specs::AppState::kFailed;
        }
        (void)(*store)->PutReplicas(*replicas);
      }
      // The restarts so far stay part of the record (a user reading why the app failed after
      // its retries needs to see that it was retried).
      int restarts = 0;
      if (auto app = (*store)->GetApp(app_id); app && *app) {
        restarts = (*app)->num_restarts;
        // The summary first, as the supervisor leaves it: a reader that sees the state finds it,
        // and a reader waiting on the app's directory (a managed job's driver) wakes for it. Not
        // over the supervisor's own: one that recorded its end and died before telling this
        // process "done" left both (and the store keeps its first terminal state).
        if (!specs::IsTerminal((*app)->state)) {
          WriteLostAppSummary(**app, replicas.ok() ? *replicas : std::vector<ReplicaRecord>{}, NowSeconds());
        }
      }
      (void)(*store)->SetAppState(app_id, specs::AppState::kFailed, restarts, std::string(kSupervisorDiedWatchdog),
                                  "<NONE>", FailureCause::kSupervisorLost);
    }
  }
  _exit(0);
}

}  // namespace

void WatchdogLog::Feed(std::string_view bytes) {
  buf_.append(bytes);
  size_t nl;
  while ((nl = buf_.find('\n')) != std::string::npos) {
    std::string line = buf_.substr(0, nl);
    buf_.erase(0, nl + 1);
    if (line == kWatchdogDoneLine) {
      done_ = true;
      continue;
    }
    size_t sp = line.find(' ');
    if (sp != std::string::npos) groups_[std::atoi(line.c_str())] = line.substr(sp + 1);
  }
}

std::string WatchdogReplicaLine(int pgid, const std::string& identity) { return fmt::format("{} {}", pgid, identity); }

Watchdog::~Watchdog() {
  if (fd_ >= 0) ::close(fd_);
}

void Watchdog::Start(const std::string& state_dir, const std::string& app_id, int ready_fd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  pid_t pid = fork();
  if (pid == 0) {
    // The supervisor's other descriptors stay open here: SQLite's table of open files, which
    // this child inherits, names them, and the store this child opens if the supervisor dies
    // shares its WAL index with that table. (A warm supervisor's link to its caller stays
    // open here too, until this guard exits after the supervisor.)
    ::close(fds[1]);
    if (ready_fd >= 0) ::close(ready_fd);
    RunWatchdog(fds[0], state_dir, app_id);
  }
  ::close(fds[0]);
  if (pid < 0) {
    ::close(fds[1]);
    return;
  }
  fd_ = fds[1];
}

void Watchdog::ReplicaStarted(int pgid, const std::string& identity) {
  std::string line = WatchdogReplicaLine(pgid, identity) + "\n";
  if (!held_) {
    Tell(line);
    return;
  }
  pending_ += line;
  if (++pending_lines_ >= kBatchLines) {
    Tell(pending_);
    pending_.clear();
    pending_lines_ = 0;
  }
}

void Watchdog::Hold() { held_ = true; }

void Watchdog::Flush() {
  held_ = false;
  if (!pending_.empty()) Tell(pending_);
  pending_.clear();
  pending_lines_ = 0;
}

void Watchdog::Done() {
  Flush();
  Tell(std::string(kWatchdogDoneLine) + "\n");
}

void Watchdog::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Watchdog::Tell(std::string_view text) {
  if (fd_ < 0) return;
  const char* data = text.data();
  size_t n = text.size();
  while (n > 0) {
    ssize_t w = ::write(fd_, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    data += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace torchx::schedulers::local
