// GPU readings from torchx-gpu-metrics (see gpu_metrics.h): one socket serves as the helper's
// stdin and stdout; a request is a newline, a reading is a line back.
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/helper_exe.h"
#include "devices/gpu_metrics_wire.h"
#include "torchx/devices/gpu_metrics.h"

extern char** environ;

namespace torchx::devices {
namespace {

// NVML's initialisation walks every GPU (seconds on a large host without persistence mode); a
// reading takes milliseconds. A helper past these is taken for hung and not asked again.
constexpr int kOpenTimeoutMs = 60'000;
constexpr int kSampleTimeoutMs = 10'000;

class GpuMetricsHelper final : public GpuMetrics {
 public:
  GpuMetricsHelper(int fd, int pidfd, std::string path) : fd_(fd), pidfd_(pidfd), path_(std::move(path)) {}
  GpuMetricsHelper(const GpuMetricsHelper&) = delete;
  GpuMetricsHelper& operator=(const GpuMetricsHelper&) = delete;
  // The helper exits at EOF; whoever reaps this process's children reaps it (the supervisor's
  // loop reaps every child).
  ~GpuMetricsHelper() override {
    if (fd_ >= 0) ::close(fd_);
    if (pidfd_ >= 0) ::close(pidfd_);
  }

  Result<std::vector<GpuDeviceSample>> Sample() override {
    if (fd_ < 0) return broken_;
    if (::send(fd_, "\n", 1, MSG_NOSIGNAL) != 1)
      return Broken(fmt::format("cannot ask {}: {}", path_, strerror(errno)));
    return ReadReading(kSampleTimeoutMs);
  }

  /// The helper's first line: NVML open, or why not.
  Status Opened() {
    auto first = ReadReading(kOpenTimeoutMs);
    return first ? OkStatus() : first.error();
  }

 private:
  Result<std::vector<GpuDeviceSample>> ReadReading(int timeout_ms) {
    size_t nl;
    while ((nl = buffer_.find('\n')) == std::string::npos) {
      pollfd p{fd_, POLLIN, 0};
      int ready = ::poll(&p, 1, timeout_ms);
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {
        // Hung (in the driver): stopped through its pidfd, which names it even once reaped.
        if (pidfd_ >= 0) (void)::syscall(SYS_pidfd_send_signal, pidfd_, SIGKILL, nullptr, 0);
        return Broken(fmt::format("{} did not answer within {} s", path_, timeout_ms / 1000));
      }
      char chunk[4096];
      ssize_t n = ready > 0 ? ::read(fd_, chunk, sizeof chunk) : -1;
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Broken(buffer_.empty() ? fmt::format("{} exited", path_) : buffer_);
      buffer_.append(chunk, static_cast<size_t>(n));
    }
    std::string line = buffer_.substr(0, nl);
    buffer_.erase(0, nl + 1);
    auto reading = internal::GpuReadingFromLine(line);
    if (!reading && reading.error().code() == StatusCode::kInternal) return Broken(reading.error().message());
    return reading;
  }

  // Every later reading answers this at once.
  Status Broken(const std::string& why) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    broken_ = UnavailableError(why);
    return broken_;
  }

  int fd_;
  int pidfd_;  // -1 where the kernel has no pidfd_open (before 5.3): a hung helper then lives on
  std::string path_;
  std::string buffer_;
  Status broken_ = OkStatus();
};

bool HasNvidiaDriver() {
  for (const char* path : {"/dev/nvidiactl", "/proc/driver/nvidia", "/dev/dxg"}) {
    if (::access(path, F_OK) == 0) return true;
  }
  return false;
}

}  // namespace

Result<std::unique_ptr<GpuMetrics>> StartGpuMetricsHelper() {
  // A host with no NVIDIA driver at all (no device node, no /proc entry, no WSL GPU) is told so
  // without a process started for it: every app that lives past its first sample asks once.
  if (const char* lib = std::getenv("TORCHX_NVML_LIBRARY"); (!lib || !*lib) && !HasNvidiaDriver()) {
    return UnavailableError("no NVIDIA driver on this host (no /dev/nvidiactl, /proc/driver/nvidia or /dev/dxg)");
  }
#ifdef TORCHX_GPU_METRICS_BUILD_PATH
  const char* build_path = TORCHX_GPU_METRICS_BUILD_PATH;
#else
  const char* build_path = nullptr;
#endif
  auto path = torchx::internal::FindHelperExecutable("torchx-gpu-metrics", "TORCHX_GPU_METRICS", build_path);
  if (!path) return UnavailableError(path.error().message());
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return UnavailableError(fmt::format("cannot start {}: socketpair: {}", *path, strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, sv[1], 0);
  posix_spawn_file_actions_adddup2(&actions, sv[1], 1);
  // The caller may block signals for its own loop (the supervisor's signalfd): the helper starts
  // with none blocked and every one at its default.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::string parent = std::to_string(::getpid());
  char* argv[] = {path->data(), parent.data(), nullptr};
  pid_t pid = -1;
  int rc = posix_spawn(&pid, path->c_str(), &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    return UnavailableError(fmt::format("cannot start {}: {}", *path, strerror(rc)));
  }
  // Before anything can reap it (this thread runs the caller's loop), so the pid is still the helper's.
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  auto helper = std::make_unique<GpuMetricsHelper>(sv[0], pidfd, *path);
  if (Status opened = helper->Opened(); !opened.ok()) return opened;
  return std::unique_ptr<GpuMetrics>(std::move(helper));
}

}  // namespace torchx::devices
