#include "torchx/devices/device.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/helper_exe.h"

extern char** environ;

namespace torchx::devices {
namespace {

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
    s.replace(pos, from.size(), to);
  return s;
}

}  // namespace

Result<PjrtProbe> ProbePjrtLibrary(const std::string& library, const std::map<std::string, std::string>& create_options,
                                   std::chrono::milliseconds timeout) {
#ifdef TORCHX_DEVICE_PROBE_BUILD_PATH
  const char* build_path = TORCHX_DEVICE_PROBE_BUILD_PATH;
#else
  const char* build_path = nullptr;
#endif
  TORCHX_ASSIGN_OR_RETURN(std::string probe,
                          internal::FindHelperExecutable("torchx-device-probe", "TORCHX_DEVICE_PROBE", build_path));
  nlohmann::json opts = nlohmann::json::object();
  for (const auto& [k, v] : create_options) opts[k] = v;
  std::vector<std::string> args = {probe, library, opts.dump()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return InternalError(fmt::format("device probe: pipe: {}", std::strerror(errno)));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, probe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    return FailedPreconditionError(fmt::format("device probe: cannot start {}: {}", probe, std::strerror(rc)));
  }
  std::string text;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  char buf[4096];
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      timed_out = true;
      break;
    }
    ssize_t r = ::read(out[0], buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    text.append(buf, static_cast<size_t>(r));
  }
  ::close(out[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string what = fmt::format("PJRT library {}", library);
  if (timed_out) return FailedPreconditionError(fmt::format("{}: timed out after {} ms", what, timeout.count()));
  if (WIFSIGNALED(status)) {
    return FailedPreconditionError(fmt::format("{}: crashed (signal {}) while loading", what, WTERMSIG(status)));
  }
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) {
    return FailedPreconditionError(fmt::format("{}: the probe exited with status {} without a report", what,
                                               WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  }
  if (!j.value("ok", false)) {
    return FailedPreconditionError(
        fmt::format("{}: {} failed: {}", what, j.value("step", "?"), j.value("message", "")));
  }
  PjrtProbe probe_out;
  probe_out.api_major = j.value("api_major", 0);
  probe_out.api_minor = j.value("api_minor", 0);
  probe_out.platform = j.value("platform", "");
  probe_out.device_count = j.value("devices", 0);
  return probe_out;
}

Result<int> DeviceChipCount(const DevicePlugin& device) {
  if (device.chip_count >= 0) return device.chip_count;
  if (device.count_chips) return device.count_chips();
  if (device.library_path.empty()) {
    return FailedPreconditionError(fmt::format(
        "device {}: no chip count and no PJRT library to ask (set chip_count or library_path)", device.name));
  }
  TORCHX_ASSIGN_OR_RETURN(PjrtProbe probe, ProbePjrtLibrary(device.library_path, device.create_options));
  return probe.device_count;
}

std::map<std::string, std::string> DeviceEnv(const DevicePlugin& device, int rank, int count, int chips) {
  std::map<std::string, std::string> env = {
      {"PJRT_DEVICE", device.name},
      {"PJRT_LOCAL_PROCESS_RANK", std::to_string(rank)},
      {"PJRT_LOCAL_PROCESS_COUNT", std::to_string(count)},
  };
  if (device.name == "LIBRARY") env["PJRT_LIBRARY_PATH"] = device.library_path;
  for (const auto& [k, v] : device.env_template) {
    env[k] = Replace(Replace(Replace(v, "{rank}", std::to_string(rank)), "{count}", std::to_string(count)), "{chips}",
                     std::to_string(chips));
  }
  return env;
}

Result<std::optional<DevicePlugin>> SelectDevice(const std::string& pjrt_device, const std::string& pjrt_library_path,
                                                 const DeviceSource& devices) {
  if (pjrt_device.empty()) return std::optional<DevicePlugin>();
  std::string name = pjrt_device;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
  if (name == "LIBRARY") {
    if (pjrt_library_path.empty()) {
      return InvalidArgumentError("PJRT_DEVICE=LIBRARY needs PJRT_LIBRARY_PATH, the path of a PJRT plugin library");
    }
    DevicePlugin d;
    d.name = "LIBRARY";
    d.library_path = pjrt_library_path;
    d.source = "PJRT_LIBRARY_PATH";
    return std::optional(std::move(d));
  }
  if (auto d = devices.Find(name)) return std::optional(std::move(*d));
  return NotFoundError(
      fmt::format("PJRT_DEVICE={}: no device plugin by that name; registered: [{}] (or LIBRARY "
                  "with PJRT_LIBRARY_PATH)",
                  pjrt_device, fmt::join(devices.Names(), ", ")));
}

Result<int> SelectedDeviceChipCount(const DeviceSource& devices) {
  const char* dev = std::getenv("PJRT_DEVICE");
  const char* lib = std::getenv("PJRT_LIBRARY_PATH");
  if (!dev || !*dev) {
    return FailedPreconditionError(fmt::format(
        "set PJRT_DEVICE to the device whose chips to count (registered: [{}], or LIBRARY with PJRT_LIBRARY_PATH)",
        fmt::join(devices.Names(), ", ")));
  }
  TORCHX_ASSIGN_OR_RETURN(auto device, SelectDevice(dev, lib ? lib : "", devices));
  return DeviceChipCount(*device);
}

}  // namespace torchx::devices
