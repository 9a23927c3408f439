#include "core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "core/cancel_scope.h"

extern char** environ;

namespace torchx::internal {
namespace {

// Ends a tool that has run too long or for nobody, as a person would: SIGINT (py-spy then detaches
// from the process it reads, which a SIGKILL mid-read could leave stopped; srun ends its step),
// SIGTERM a second later, SIGKILL a second after that. Its wait status.
int StopGently(pid_t pid) {
  int status = 0;
  for (int sig : {SIGINT, SIGTERM, SIGKILL}) {
    ::kill(pid, sig);
    for (int i = 0; i < (sig == SIGKILL ? 1 : 20); ++i) {
      pid_t r = ::waitpid(pid, &status, sig == SIGKILL ? 0 : WNOHANG);
      if (r == pid || (r < 0 && errno != EINTR)) return status;
      if (r == 0) ::usleep(50'000);
    }
  }
  return status;
}

}  // namespace
namespace {

// Where `name` runs from: itself when it names a path, else the first executable of that name on
// PATH ("" for none). Found before the fork, so that the child only execs.
std::string ExecutablePath(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) return "";
    dirs.remove_prefix(colon + 1);
  }
}

class SystemCommandRunner final : public CommandRunner {
 public:
  Result<CommandResult> Run(const std::vector<std::string>& argv, const std::string& cwd,
                            std::chrono::milliseconds timeout) override {
    return RunCommand(argv, cwd, timeout);
  }
};

}  // namespace

std::shared_ptr<CommandRunner> MakeSystemCommandRunner() { return std::make_shared<SystemCommandRunner>(); }

Result<CommandResult> RunCommand(const std::vector<std::string>& argv, const std::string& cwd,
                                 std::chrono::milliseconds timeout, const std::vector<std::string>& env_overrides) {
  if (argv.empty()) return InvalidArgumentError("RunCommand: empty argv");
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return InternalError(fmt::format("pipe: {}", std::strerror(errno)));
  if (pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return InternalError(fmt::format("pipe: {}", std::strerror(errno)));
  }
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<char*> envp;
  std::vector<std::string> overrides = env_overrides;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    bool replaced = false;
    for (const auto& o : overrides) {
      size_t eq = o.find('=');
      if (eq != std::string::npos && entry.size() > eq &&
          entry.substr(0, eq + 1) == std::string_view(o).substr(0, eq + 1)) {
        replaced = true;
      }
    }
    if (!replaced) envp.push_back(*e);
  }
  for (auto& o : overrides) envp.push_back(o.data());
  envp.push_back(nullptr);
  auto close_pipes = [&] {
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
  };
  std::string path = ExecutablePath(args[0]);
  if (path.empty()) {
    close_pipes();
    return NotFoundError(fmt::format("`{}` is not installed (not found on PATH)", args[0]));
  }
  // The tool dies with the thread that runs it (PR_SET_PDEATHSIG), which waits for it: a caller
  // killed while `sbatch` runs (a composite's driver) leaves no submission going on without it,
  // so whoever takes over knows that what it cannot find now was never submitted.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    close_pipes();
    return InternalError(fmt::format("pipe: {}", std::strerror(errno)));
  }
  // Signals are blocked across the fork: the child must not run the caller's handlers (Python's
  // among them) before it resets them, as posix_spawn would.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction sa {};
      if (::sigaction(sig, nullptr, &sa) == 0 && sa.sa_handler != SIG_IGN && sa.sa_handler != SIG_DFL) {
        sa.sa_handler = SIG_DFL;
        sa.sa_flags = 0;
        (void)::sigaction(sig, &sa, nullptr);
      }
    }
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    if (::getppid() != parent) ::_exit(127);
    // What failed: 1 the descriptors, 2 the directory, 3 the exec; and its errno.
    auto fail = [&](int step) {
      int why[2] = {step, errno};
      (void)!::write(report[1], why, sizeof why);
      ::_exit(127);
    };
    int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(out[1], 1) < 0 || ::dup2(err[1], 2) < 0) fail(1);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) fail(2);
    ::execve(path.c_str(), cargv.data(), envp.data());
    fail(3);
  }
  int spawn_errno = pid < 0 ? errno : 0;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::close(report[1]);
  int why[2] = {0, spawn_errno};
  if (pid > 0) {
    // The child's exec failed if it says why; its exec closes the pipe otherwise. Waited for no
    // longer than the tool may run: a process forked meanwhile by another thread holds the pipe
    // until it execs.
    pollfd p{report[0], POLLIN, 0};
    int ready;
    int wait_ms = static_cast<int>(std::min<std::chrono::milliseconds::rep>(timeout.count(), 1 << 30));
    while ((ready = ::poll(&p, 1, wait_ms)) < 0 && errno == EINTR) {
    }
    ssize_t got = -1;
    if (ready > 0) {
      while ((got = ::read(report[0], why, sizeof why)) < 0 && errno == EINTR) {
      }
    }
    if (got == static_cast<ssize_t>(sizeof why)) {
      while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    } else {
      why[0] = 0;
      why[1] = 0;
    }
  }
  ::close(report[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (why[1] != 0) {
    ::close(out[0]);
    ::close(err[0]);
    if (why[0] == 2) {
      return UnavailableError(fmt::format("cannot run {} in {}: {}", args[0], cwd, std::strerror(why[1])));
    }
    if (why[0] == 3 && why[1] == ENOENT) {
      return NotFoundError(
          fmt::format("`{}` ({}) cannot be run: it, or the interpreter its first line names, is "
                      "missing",
                      args[0], path));
    }
    return InternalError(fmt::format("cannot run {}: {}", args[0], std::strerror(why[1])));
  }
  CommandResult res;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  bool timed_out = false;
  char buf[65536];
  bool cancelled = false;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (CancelScope::Cancelled()) {  // the caller's caller has gone: the tool's work is wasted
      cancelled = true;
      break;
    }
    // In slices, so that a cancelled scope is seen within a tenth of a second.
    int n = ::poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 100)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t r = ::read(fds[i].fd, buf, sizeof buf);
      if (r > 0) {
        (i == 0 ? res.out : res.err).append(buf, static_cast<size_t>(r));
      } else if (r == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) ::close(f.fd);
  }
  int status = 0;
  if (timed_out || cancelled) {
    status = StopGently(pid);
  } else {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (cancelled) return Status(StatusCode::kCancelled, fmt::format("`{}` was stopped: its caller has gone", args[0]));
  if (timed_out) {
    return Status(StatusCode::kDeadlineExceeded,
                  fmt::format("`{}` did not finish within {} ms", args[0], timeout.count()));
  }
  res.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return res;
}

}  // namespace torchx::internal
