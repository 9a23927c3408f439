#include "schedulers/local/process_identity.h"

#include <signal.h>

#include <fstream>
#include <sstream>

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
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return "";
  // Fields after the command name, which is parenthesised and may itself hold spaces or ')'.
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream rest(stat.substr(close + 2));
  std::string state;
  rest >> state;  // field 3
  if (state == "Z" || state == "X") return "";
  std::string field;
  for (int i = 4; i <= 22 && rest >> field; ++i) {
    if (i == 22) return BootId() + ":" + field;  // starttime
  }
  return "";
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
  if (SignalGroupIfSame(pgid, identity, sig)) return true;
  if (!ProcessIdentity(pgid).empty()) return false;  // the pid now belongs to someone else
  return ::kill(-pgid, sig) == 0;
}

}  // namespace torchx::schedulers::local
