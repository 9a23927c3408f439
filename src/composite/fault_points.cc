#include "composite/fault_points.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>

namespace torchx::composite {
namespace {

std::atomic<bool> armed{false};

std::string EnvOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// Whether `list` (comma-separated) names `point`.
bool Named(std::string_view list, std::string_view point) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    if (list.substr(0, comma) == point) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

// How many times the log says a driver died at `point`.
int Deaths(const std::string& log, std::string_view point) {
  std::ifstream in(log);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line == point;
  return n;
}

}  // namespace

void ArmFaultPoints() { armed = true; }

void FaultPoint(std::string_view point) {
  if (!armed) return;
  std::string log = EnvOr("TORCHX_FAULT_LOG", "");
  if (log.empty() || !Named(EnvOr("TORCHX_FAULT_POINT", ""), point)) return;
  // Under an flock of the log: two drivers of one composite never run at once (the driver's own
  // lock), but the drivers of several composites in one test may share the log.
  int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  ::flock(fd, LOCK_EX);
  int times = std::atoi(EnvOr("TORCHX_FAULT_TIMES", "1").c_str());
  if (Deaths(log, point) >= times) {
    ::close(fd);
    return;
  }
  std::string line = std::string(point) + "\n";
  if (::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size())) ::fsync(fd);
  ::kill(::getpid(), SIGKILL);
}

}  // namespace torchx::composite
