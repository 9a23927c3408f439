#include "schedulers/local/process_identity.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <string_view>

#include <fstream>

namespace torchx::schedulers::local {

const std::string& BootId() {
  static const std::string id = [] {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string s;
    std::getline(in, s);
    return s.empty() ? std::string("unknown-boot") : s;
  }();
  return id;
}

std::string ProcessIdentity(int pid) {
  if (pid <= 0) return "";
  // Plain syscalls: this runs once per replica start and on every liveness check.
  char path[32];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return "";
  std::string_view stat(buf, static_cast<size_t>(n));
  // Fields after the command name, which is parenthesised and may itself hold spaces or ')'.
  size_t close = stat.rfind(')');
  if (close == std::string_view::npos || close + 2 >= stat.size()) return "";
  std::string_view rest = stat.substr(close + 2);
  if (rest[0] == 'Z' || rest[0] == 'X') return "";  // field 3: state
  size_t pos = 0;
  for (int field = 3; field < 22; ++field) {  // skip to field 22: starttime
    pos = rest.find(' ', pos);
    if (pos == std::string_view::npos) return "";
    ++pos;
  }
  size_t end = rest.find(' ', pos);
  return BootId() + ":" + std::string(rest.substr(pos, end - pos));
}

long long BoottimeNs() {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

std::string NewChildIdentity(int pid, long long before_ns, long long after_ns) {
  static const long long ns_per_tick = [] {
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 && 1000000000L % hz == 0 ? 1000000000LL / hz : 0LL;
  }();
  if (pid > 0 && ns_per_tick > 0 && before_ns >= 0 && before_ns / ns_per_tick == after_ns / ns_per_tick) {
    return BootId() + ":" + std::to_string(before_ns / ns_per_tick);
  }
  return ProcessIdentity(pid);
}

bool IsSameProcess(int pid, const std::string& identity) {
  return !identity.empty() && ProcessIdentity(pid) == identity;
}

bool FromEarlierBoot(const std::string& identity) {
  return !identity.empty() && identity.rfind(BootId() + ":", 0) != 0;
}

bool SignalGroupIfSame(int pgid, const std::string& identity, int sig) {
  if (!IsSameProcess(pgid, identity)) return false;
  return ::kill(-pgid, sig) == 0;
}

bool SignalGroupOrLeftovers(int pgid, const std::string& identity, int sig) {
  if (pgid <= 0) return false;
  if (::kill(-pgid, 0) != 0) return false;  // no such group: nothing to signal, no /proc reads
  if (SignalGroupIfSame(pgid, identity, sig)) return true;
  if (!ProcessIdentity(pgid).empty()) return false;  // the pid now belongs to someone else
  return ::kill(-pgid, sig) == 0;
}

}  // namespace torchx::schedulers::local
