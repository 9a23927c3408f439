#include "schedulers/local/this_host.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace torchx::schedulers::local {
namespace {

// The value in kB after `key` ("MemTotal:       16318240 kB"), or 0.
int64_t KilobytesOf(std::string_view text, std::string_view key) {
  size_t at = text.find(key);
  if (at == std::string_view::npos || (at > 0 && text[at - 1] != '\n')) return 0;
  at += key.size();
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
  int64_t kb = 0;
  for (int digits = 0; at < text.size() && text[at] >= '0' && text[at] <= '9' && digits < 18; ++at, ++digits) {
    kb = kb * 10 + (text[at] - '0');
  }
  return kb;
}

}  // namespace

std::string ReadProcFile(const char* path) {
  std::string out;
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::pair<int64_t, int64_t> ParseMemInfo(std::string_view meminfo) {
  return {KilobytesOf(meminfo, "MemTotal:") / 1024, KilobytesOf(meminfo, "MemAvailable:") / 1024};
}

HostInfo ReadThisHost() {
  HostInfo h;
  std::array<char, 256> name{};
  h.name = ::gethostname(name.data(), name.size() - 1) == 0 ? std::string(name.data()) : "localhost";
  h.address = "127.0.0.1";
  h.state = "up";
  cpu_set_t set;
  CPU_ZERO(&set);
  h.cpus = static_cast<double>(::sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set)
                                                                              : ::sysconf(_SC_NPROCESSORS_ONLN));
  auto [total, available] = ParseMemInfo(ReadProcFile("/proc/meminfo"));
  h.memory_mb = total;
  if (total > 0 && available > 0) h.memory_used_mb = total - available;
  // The 1-minute load: runnable processes on average, which reads as CPUs in use.
  std::string load = ReadProcFile("/proc/loadavg");
  if (!load.empty()) h.cpus_used = std::strtod(load.c_str(), nullptr);
  // One directory per GPU the NVIDIA driver runs (no NVML needed to count them).
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++h.gpus;
  }
  return h;
}

}  // namespace torchx::schedulers::local
