// The operating system's starter (see process_starter.h).
#include "schedulers/local/process_starter.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "schedulers/local/warm_supervisor.h"

extern char** environ;

namespace torchx::schedulers::local {
namespace {

class OsStarter final : public ProcessStarter {
 public:
  explicit OsStarter(SpawnMode mode) : mode_(mode) {}

  Result<int> RunToExit(const std::vector<std::string>& args) override {
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    for (int fd : {0, 1, 2})
      posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, copy.front().c_str(), &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) return UnavailableError(fmt::format("cannot start {}: {}", copy.front(), strerror(rc)));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  }

  Result<std::unique_ptr<DetachedStart>> StartDetached(const std::string& supervisor, const std::string& state_dir,
                                                       const std::string& app_id, const AppPlan& plan) override {
    return local::StartDetached(supervisor, state_dir, app_id, plan, mode_);
  }

  std::vector<std::string> Environment() override { return EnvironmentOf(environ); }
  std::string LaunchContext() override { return local::LaunchContext(); }
  int ProcessId() override { return static_cast<int>(getpid()); }

 private:
  SpawnMode mode_;
};

}  // namespace

std::shared_ptr<ProcessStarter> OsProcessStarter(SpawnMode mode) { return std::make_shared<OsStarter>(mode); }

}  // namespace torchx::schedulers::local
