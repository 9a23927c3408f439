#include "core/python_bridge.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "core/cancel_scope.h"

extern char** environ;

namespace torchx::internal {
namespace {

constexpr int kReplyFd = 3;

// Runs the module as `python -m` would, unless the interpreter cannot find it: then it exits with
// kModuleMissing and prints nothing (Python's own "Error while finding module specification"
// would reach the user on every call of a source build that has no `pip install .`).
constexpr const char* kBootstrap =
    "import importlib.util, runpy, sys\n"
    "m = sys.argv[1]\n"
    "try:\n"
    "    found = importlib.util.find_spec(m)\n"
    "except ImportError:\n"
    "    found = None\n"
    "if found is None:\n"
    "    sys.exit(3)\n"
    "sys.argv = [m]\n"
    "runpy.run_module(m, run_name='__main__', alter_sys=True)\n";
constexpr int kModuleMissing = 3;

}  // namespace

std::string PythonInterpreter() {
  if (const char* env = std::getenv("TORCHX_PYTHON"); env && *env) return env;
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto beside = exe.parent_path() / "python3";
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return "python3";
}

PythonBridge::~PythonBridge() {
  if (to_child_) std::fclose(to_child_);  // the child reads EOF and returns
  to_child_ = nullptr;
  if (pid_ > 0 && !bounded_) {  // the CLI's: the child ends once it reads EOF
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  if (pid_ > 0) {
    // A child that does not end (a thread or process its component started that Python's exit
    // waits for) is killed, with its group, after a few seconds.
    for (int i = 0; i < 50; ++i) {
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      ::usleep(100'000);
    }
  }
  Kill();
}

Status PythonBridge::Start(const std::string& module, const std::string& purpose, bool bounded) {
  module_ = module;
  purpose_ = purpose;
  bounded_ = bounded;
  int req[2], rep[2];
  if (::pipe2(req, O_CLOEXEC) != 0) return InternalError(fmt::format("python bridge: pipe: {}", std::strerror(errno)));
  if (::pipe2(rep, O_CLOEXEC) != 0) {
    ::close(req[0]);
    ::close(req[1]);
    return InternalError(fmt::format("python bridge: pipe: {}", std::strerror(errno)));
  }
  python_ = PythonInterpreter();
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, req[0], 0);
  posix_spawn_file_actions_adddup2(&fa, rep[1], kReplyFd);
  posix_spawn_file_actions_adddup2(&fa, 2, 1);  // user code's prints go to our stderr
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "TORCHX_BRIDGE_FD=", 17) != 0) envp.push_back(*e);
  }
  std::string fd_env = fmt::format("TORCHX_BRIDGE_FD={}", kReplyFd);
  envp.push_back(fd_env.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = {python_, "-u", "-c", kBootstrap, module};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (bounded) {  // a group of its own: a timeout kills what it started too
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
  }
  int rc = ::posix_spawnp(&pid_, python_.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  if (rc == 0 && bounded) group_ = pid_;
  ::close(req[0]);
  ::close(rep[1]);
  if (rc != 0) {
    pid_ = -1;
    ::close(req[1]);
    ::close(rep[0]);
    return FailedPreconditionError(fmt::format("{} need a Python interpreter: cannot start {}: {} (set TORCHX_PYTHON)",
                                               purpose, python_, std::strerror(rc)));
  }
  to_child_ = ::fdopen(req[1], "w");
  from_child_ = rep[0];
  return OkStatus();
}

void PythonBridge::Kill() {
  if (group_ > 0) ::kill(-group_, SIGKILL);  // what the component started, the child gone or not
  group_ = -1;
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  if (to_child_) std::fclose(to_child_);
  to_child_ = nullptr;
  if (from_child_ >= 0) ::close(from_child_);
  from_child_ = -1;
  pending_.clear();
}

Result<std::string> PythonBridge::Call(const std::string& request_json,
                                       std::optional<std::chrono::milliseconds> timeout) {
  if (!to_child_ || from_child_ < 0) return FailedPreconditionError("python bridge: not started");
  std::string line = request_json + "\n";
  bool sent = std::fwrite(line.data(), 1, line.size(), to_child_) == line.size() && std::fflush(to_child_) == 0;
  auto deadline = std::chrono::steady_clock::now() + timeout.value_or(std::chrono::milliseconds(0));
  std::string reply;
  bool timed_out = false;
  bool cancelled = false;
  while (sent) {
    if (size_t nl = pending_.find('\n'); nl != std::string::npos) {
      reply = pending_.substr(0, nl + 1);
      pending_.erase(0, nl + 1);
      break;
    }
    if (bounded_ && CancelScope::Cancelled()) {  // whoever asked has gone: the child's work is wasted
      cancelled = true;
      break;
    }
    // In slices, so that a cancelled scope is seen within a tenth of a second.
    int wait_ms = 100;
    if (timeout) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left.count() + 1, 100));
    }
    pollfd p{from_child_, POLLIN, 0};
    int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    if (ready == 0) continue;  // the deadline and the scope are looked at again
    char buf[65536];
    ssize_t n = ::read(from_child_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child closed its end: it exited
    pending_.append(buf, static_cast<size_t>(n));
  }
  if (cancelled) {
    Kill();
    return Status(StatusCode::kCancelled, fmt::format("{}: stopped: its caller has gone", purpose_));
  }
  if (timed_out) {
    Kill();
    return DeadlineExceededError(fmt::format("{}: `{} -m {}` did not answer within {:.0f} s and was stopped", purpose_,
                                             python_, module_, static_cast<double>(timeout->count()) / 1000.0));
  }
  if (reply.empty()) {
    int status = 0;
    std::fclose(to_child_);
    to_child_ = nullptr;  // the child reads EOF, if it is still there
    if (pid_ > 0 && ::waitpid(pid_, &status, 0) == pid_) {
      pid_ = -1;
      if (WIFEXITED(status) && WEXITSTATUS(status) == kModuleMissing) {
        return FailedPreconditionError(
            fmt::format("{} need the torchx Python package, which {} cannot import (install it with `pip install .`, "
                        "or set TORCHX_PYTHON to an interpreter that has it)",
                        purpose_, python_));
      }
    }
    return FailedPreconditionError(fmt::format(
        "{} need the torchx Python package: `{} -m {}` exited without answering (see its error above; install the "
        "package with `pip install .` or set TORCHX_PYTHON)",
        purpose_, python_, module_));
  }
  return reply;
}

}  // namespace torchx::internal
