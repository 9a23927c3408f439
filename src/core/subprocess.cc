#include "core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

extern char** environ;

namespace torchx::internal {
namespace {

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
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
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
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0].c_str(), &fa, nullptr, cargv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(err[0]);
    if (rc == ENOENT) return NotFoundError(fmt::format("`{}` is not installed (not found on PATH)", args[0]));
    return InternalError(fmt::format("cannot run {}: {}", args[0], std::strerror(rc)));
  }
  CommandResult res;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  bool timed_out = false;
  char buf[65536];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    int n = ::poll(fds, 2, static_cast<int>(left.count()));
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
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return Status(StatusCode::kDeadlineExceeded,
                  fmt::format("`{}` did not finish within {} ms", args[0], timeout.count()));
  }
  res.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return res;
}

}  // namespace torchx::internal
