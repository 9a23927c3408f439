#include "composite/driver_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "core/daemon.h"
#include "core/helper_exe.h"
#include "torchx/composite/driver.h"

extern char** environ;

namespace torchx::composite {
namespace {

namespace fs = std::filesystem;

std::string LockPath(const std::string& dir, const std::string& id) {
  return (fs::path(dir) / (id + ".driver.lock")).string();
}

// torchx-composite-driver; an older install's torchx-pipeline-driver (its name before) where only
// that one is found.
Result<std::string> FindDriver() {
#ifdef TORCHX_COMPOSITE_DRIVER_BUILD_PATH
  const char* build_path = TORCHX_COMPOSITE_DRIVER_BUILD_PATH;
#else
  const char* build_path = nullptr;
#endif
  // $TORCHX_PIPELINE_DRIVER, the override's name before, still works when the new one is unset.
  const char* env = std::getenv("TORCHX_COMPOSITE_DRIVER");
  const char* old_env = std::getenv("TORCHX_PIPELINE_DRIVER");
  const char* env_var =
      (env == nullptr || *env == '\0') && old_env && *old_env ? "TORCHX_PIPELINE_DRIVER" : "TORCHX_COMPOSITE_DRIVER";
  auto found = internal::FindHelperExecutable("torchx-composite-driver", env_var, build_path);
  if (found) return found;
  if (auto old = internal::FindHelperExecutable("torchx-pipeline-driver", "TORCHX_PIPELINE_DRIVER", nullptr))
    return old;
  return FailedPreconditionError("composite driver: " + found.error().message());
}

// The last line the driver wrote: why it could not start.
std::string LastLine(const std::string& path) {
  std::ifstream f(path);
  std::string line, last;
  while (std::getline(f, line)) {
    if (!line.empty()) last = line;
  }
  return last.empty() ? "no message" : last;
}

}  // namespace

Result<std::optional<DriverLock>> DriverLock::TryTake(const std::string& pipelines_dir, const std::string& id) {
  std::string path = LockPath(pipelines_dir, id);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return UnavailableError(fmt::format("pipeline: cannot open {}: {}", path, std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) return std::optional<DriverLock>();
    return UnavailableError(fmt::format("pipeline: cannot lock {}: {}", path, std::strerror(err)));
  }
  return std::optional<DriverLock>(DriverLock(fd));
}

DriverLock::~DriverLock() {
  if (fd_ >= 0) ::close(fd_);
}

bool DriverRunning(const std::string& pipelines_dir, const std::string& id) {
  // Read-write as the driver opens it (NFS emulates flock with fcntl locks, which want a writable
  // descriptor); read-only where the file system refuses writes (remounted read-only), so that a
  // reader there still sees the driver holding the lock. No lock file: no driver ever took it.
  std::string path = LockPath(pipelines_dir, id);
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0 && (errno == EROFS || errno == EACCES)) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases the lock if we took it
  return held;
}

std::string DriverLogPath(const std::string& dir, const std::string& id) {
  return (fs::path(dir) / (id + ".driver.log")).string();
}

Status StartDriver(const std::string& state_dir, const std::string& pipelines_dir, const std::string& id,
                   const std::string& cwd, const std::string& kind) {
  TORCHX_ASSIGN_OR_RETURN(std::string exe, FindDriver());
  std::string log = DriverLogPath(pipelines_dir, id);
  // A session of its own (the terminal may close), default signal dispositions and an empty mask
  // (the caller may block or ignore them: `torchx ui` blocks SIGTERM), stdio of its own.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<std::string> args = {exe, state_dir, id};
  if (kind != "pipeline") args.push_back(kind);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, exe.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return UnavailableError(fmt::format("{}: cannot start {} in {}: {}", kind, exe, cwd, std::strerror(rc)));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // Killed before it said whether it could start (the OOM killer, kill -9): no reason to give the
  // composite up; like a driver killed later, the next call that reads the composite starts one.
  if (WIFEXITED(status) && WEXITSTATUS(status) == internal::kDiedBeforeReady) return OkStatus();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return UnavailableError(
        fmt::format("{}: torchx-composite-driver could not start: {} (log: {})", kind, LastLine(log), log));
  }
  return OkStatus();
}

int DaemonizeDriver(int& exit_code) {
  // What the launcher left open (it may be a Python process) is not the driver's, nor its steps'.
  ::close_range(3, ~0U, 0);
  return internal::ForkUntilReady(exit_code);
}

std::optional<DriverLock> DriverStart::TakeLock(const std::string& dir) {
  auto lock = DriverLock::TryTake(dir, id_);
  if (!lock) {
    exit_code_ = Fail(lock.error().message());
    return std::nullopt;
  }
  if (!*lock) Ready();  // another driver has it: that one moves the composite
  return std::move(*lock);
}

int DriverStart::Fail(const std::string& why) {
  std::fprintf(stderr, "torchx-composite-driver: %s %s: %s\n", kind_.c_str(), id_.c_str(), why.c_str());
  internal::ReportReady(ready_fd_, false);
  return 1;
}

void DriverStart::Ready() { internal::ReportReady(ready_fd_, true); }

void DriverStart::ReportFailed() { internal::ReportReady(ready_fd_, false); }

void DriverStart::Release() {
  if (ready_fd_ >= 0) ::close(ready_fd_);
  ready_fd_ = -1;
}

int RunWatched(DriverStart& start, const std::function<int(DriverStart&)>& drive, const std::function<bool()>& wanted) {
  constexpr size_t kMaxDeaths = 5;
  constexpr auto kDeathWindow = std::chrono::minutes(1);
  std::vector<std::chrono::steady_clock::time_point> deaths;
  while (true) {
    // Each driver child reports to the watchdog, which passes the word on to a launcher still
    // waiting: "up", or "could not start" when the child exited without saying it was up (an
    // error, a crash). A child killed before it said either is replaced, the launcher still
    // waiting for the next one.
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0) return drive(start);
    std::fflush(nullptr);  // nothing buffered is written twice
    pid_t pid = ::fork();
    if (pid < 0) {
      ::close(report[0]);
      ::close(report[1]);
      return drive(start);
    }
    if (pid == 0) {
      ::close(report[0]);
      start.Release();
      DriverStart mine(start.kind(), start.id(), report[1]);
      std::_Exit(drive(mine));  // the driver: its exit code is the watchdog's
    }
    ::close(report[1]);
    std::optional<bool> said = internal::AwaitReport(report[0]);
    ::close(report[0]);
    if (said && *said) start.Ready();
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) {
      if (!said || !*said) start.ReportFailed();
      return WEXITSTATUS(status);
    }
    if (!wanted()) {
      start.ReportFailed();
      return 0;
    }
    auto now = std::chrono::steady_clock::now();
    std::erase_if(deaths, [&](auto t) { return now - t > kDeathWindow; });
    if (deaths.size() >= kMaxDeaths) {
      std::fprintf(stderr,
                   "torchx-composite-driver: %s %s: the driver was killed %zu times within a minute; the next call "
                   "that reads the composite starts it again\n",
                   start.kind().c_str(), start.id().c_str(), deaths.size() + 1);
      start.ReportFailed();
      return 1;
    }
    deaths.push_back(now);
    std::fprintf(stderr, "torchx-composite-driver: %s %s: the driver was killed (signal %d); started again\n",
                 start.kind().c_str(), start.id().c_str(), WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
}

}  // namespace torchx::composite
