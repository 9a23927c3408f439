#include "pipelines/driver_process.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "core/helper_exe.h"

namespace torchx::pipelines {
namespace {

namespace fs = std::filesystem;

std::string LockPath(const std::string& dir, const std::string& id) {
  return (fs::path(dir) / (id + ".driver.lock")).string();
}

Result<std::string> FindDriver() {
#ifdef TORCHX_PIPELINE_DRIVER_BUILD_PATH
  const char* build_path = TORCHX_PIPELINE_DRIVER_BUILD_PATH;
#else
  const char* build_path = nullptr;
#endif
  auto found = internal::FindHelperExecutable("torchx-pipeline-driver", "TORCHX_PIPELINE_DRIVER", build_path);
  if (!found) return FailedPreconditionError("pipeline: " + found.error().message());
  return found;
}

}  // namespace

Result<int> StartDriver(const std::string& state_dir, const std::string& pipelines_dir, const std::string& id,
                        const std::string& cwd) {
  TORCHX_ASSIGN_OR_RETURN(std::string exe, FindDriver());
  std::string log = (fs::path(pipelines_dir) / (id + ".driver.log")).string();
  // Everything the children need is prepared before fork: only async-signal-safe calls after it.
  std::vector<std::string> args = {exe, state_dir, id};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return InternalError(fmt::format("pipeline: pipe: {}", std::strerror(errno)));
  pid_t child = ::fork();
  if (child < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return UnavailableError(fmt::format("pipeline: fork: {}", std::strerror(errno)));
  }
  if (child == 0) {
    // Double fork: the driver is not our child (no zombie in a long-lived Python process) and,
    // in its own session, outlives the terminal.
    ::setsid();
    pid_t driver = ::fork();
    if (driver == 0) {
      int in = ::open("/dev/null", O_RDONLY);
      int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      if (in < 0 || out < 0 || ::chdir(cwd.c_str()) != 0) ::_exit(127);
      ::dup2(in, 0);
      ::dup2(out, 1);
      ::dup2(out, 2);
      ::execv(exe.c_str(), argv.data());
      ::_exit(127);
    }
    int v = static_cast<int>(driver);
    (void)!::write(pipefd[1], &v, sizeof v);
    ::_exit(driver > 0 ? 0 : 1);
  }
  ::close(pipefd[1]);
  int pid = -1;
  ssize_t n;
  do {
    n = ::read(pipefd[0], &pid, sizeof pid);
  } while (n < 0 && errno == EINTR);
  ::close(pipefd[0]);
  int wstatus = 0;
  while (::waitpid(child, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (n != sizeof pid || pid <= 0) return UnavailableError("pipeline: could not start torchx-pipeline-driver");
  return pid;
}

bool DriverRunning(const std::string& pipelines_dir, const std::string& id) {
  int fd = ::open(LockPath(pipelines_dir, id).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases the lock if we took it
  return held;
}

bool TakeDriverLock(const std::string& pipelines_dir, const std::string& id) {
  int fd = ::open(LockPath(pipelines_dir, id).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return false;
  }
  return true;  // the descriptor stays open (and locked) until the process exits
}

}  // namespace torchx::pipelines
