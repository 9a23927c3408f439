#include "schedulers/py_spy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>

namespace torchx::schedulers {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// /proc/<pid>/stat's parent and process group: the fields after the command in parentheses.
std::pair<int, int> ParentAndGroupOf(const std::string& stat) {
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return {-1, -1};
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  int ppid = -1, pgrp = -1;
  rest >> state >> ppid >> pgrp;
  return {ppid, pgrp};
}

std::string CommandLine(int pid) {
  std::string raw = ReadFile(fmt::format("/proc/{}/cmdline", pid));
  std::replace(raw.begin(), raw.end(), '\0', ' ');
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw.size() > 160 ? raw.substr(0, 157) + "..." : raw;
}

// A process's environment, NAME -> value (empty when it cannot be read: another user's).
std::map<std::string, std::string, std::less<>> EnvironmentOf(int pid) {
  std::map<std::string, std::string, std::less<>> out;
  std::string env = ReadFile(fmt::format("/proc/{}/environ", pid));
  size_t at = 0;
  while (at < env.size()) {
    size_t end = env.find('\0', at);
    std::string_view var(env.data() + at, (end == std::string::npos ? env.size() : end) - at);
    if (size_t eq = var.find('='); eq != std::string_view::npos && eq > 0) {
      out.emplace(std::string(var.substr(0, eq)), std::string(var.substr(eq + 1)));
    }
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

std::optional<int> RankIn(const std::map<std::string, std::string, std::less<>>& env) {
  auto it = env.find("RANK");
  if (it == env.end()) return std::nullopt;
  char* stop = nullptr;
  long v = std::strtol(it->second.c_str(), &stop, 10);
  if (!it->second.empty() && stop && *stop == '\0' && v >= 0 && v < (1L << 30)) return static_cast<int>(v);
  return std::nullopt;
}

std::optional<int> RankOf(int pid) { return RankIn(EnvironmentOf(pid)); }

// A process as a dump lists it before its stack is read.
ProcessStack Described(int pid, std::optional<int> rank) {
  ProcessStack p;
  p.pid = pid;
  p.command = CommandLine(pid);
  p.rank = rank;
  return p;
}

bool IsNumber(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool IsPythonProcess(int pid) {
  std::error_code ec;
  fs::path exe = fs::read_symlink(fmt::format("/proc/{}/exe", pid), ec);
  if (!ec && exe.filename().string().find("python") != std::string::npos) return true;
  return ReadFile(fmt::format("/proc/{}/maps", pid)).find("libpython") != std::string::npos;
}

namespace {

// Whether `path` and its directory belong to this user or root and no one else may change them:
// a tool found beside the target's interpreter runs as this user (root, perhaps), so it must not
// be one the app's owner could have put there.
bool TrustedExecutable(const fs::path& path) {
  for (const fs::path& p : {path, path.parent_path()}) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return false;
    if (st.st_uid != ::geteuid() && st.st_uid != 0) return false;
    if (st.st_mode & (S_IWGRP | S_IWOTH)) return false;
  }
  return ::access(path.c_str(), X_OK) == 0;
}

// py-spy beside the process's interpreter (a virtual env's bin/, as `pip install py-spy` puts it
// there) where that is trusted, else on PATH.
std::optional<std::string> FindPySpy(int pid) {
  std::error_code ec;
  fs::path exe = fs::read_symlink(fmt::format("/proc/{}/exe", pid), ec);
  if (!ec) {
    fs::path beside = exe.parent_path() / "py-spy";
    if (TrustedExecutable(beside)) return beside.string();
  }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    fs::path candidate = fs::path(dir) / "py-spy";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return std::nullopt;
}

// Why this process may not attach to others (Yama's ptrace_scope), with the fix; empty if it may.
std::string AttachRefusal() {
  std::string scope = ReadFile("/proc/sys/kernel/yama/ptrace_scope");
  if (scope.empty() || ::geteuid() == 0)
    return scope.starts_with("3") ? "attaching is disabled on this host "
                                    "(kernel.yama.ptrace_scope=3, until a reboot)"
                                  : "";
  switch (scope.front()) {
    case '1':
      return "kernel.yama.ptrace_scope=1 lets only a parent process or root attach: run as root, or allow it with "
             "`sudo sysctl kernel.yama.ptrace_scope=0`";
    case '2':
      return "kernel.yama.ptrace_scope=2 lets only root attach: run as root";
    case '3':
      return "attaching is disabled on this host (kernel.yama.ptrace_scope=3, until a reboot)";
    default:
      return "";
  }
}

// Why py-spy could not read a process, and the fix: the kernel's ptrace scope where it forbids
// this (found only once py-spy has failed: a py-spy with CAP_SYS_PTRACE attaches anyway), else
// py-spy's own first line and the container case.
std::string AttachFailure(const std::string& err, int exit_code) {
  std::string why = err.substr(0, err.find('\n'));
  if (why.empty()) why = "exit " + std::to_string(exit_code);
  if (std::string refused = AttachRefusal(); !refused.empty()) {
    return fmt::format("py-spy could not attach ({}): {}", why, refused);
  }
  return fmt::format("py-spy could not read it ({}); in a container, attaching needs the SYS_PTRACE capability", why);
}

}  // namespace

std::vector<ProcessStack> ReplicaProcesses(int leader) {
  std::map<int, int> parent;  // every process's parent, and the leader's group's members
  std::set<int> mine;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (!IsNumber(name)) continue;
    int pid = std::atoi(name.c_str());
    auto [ppid, pgrp] = ParentAndGroupOf(ReadFile(fmt::format("/proc/{}/stat", pid)));
    if (ppid < 0) continue;  // gone meanwhile
    parent[pid] = ppid;
    if (pid == leader || pgrp == leader) mine.insert(pid);
  }
  // Descendants, until none is added (a process tree is shallow: a few passes).
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, ppid] : parent) {
      if (!mine.contains(pid) && mine.contains(ppid)) grew = mine.insert(pid).second || grew;
    }
  }
  std::vector<ProcessStack> out;
  for (int pid : mine) out.push_back(Described(pid, RankOf(pid)));
  return out;
}

std::vector<ProcessStack> ProcessesByEnvironment(const std::vector<EnvRule>& rules) {
  std::vector<int> pids;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (IsNumber(name)) pids.push_back(std::atoi(name.c_str()));
  }
  std::sort(pids.begin(), pids.end());
  std::vector<ProcessStack> out;
  for (int pid : pids) {
    auto env = EnvironmentOf(pid);
    bool meets = std::all_of(rules.begin(), rules.end(), [&](const EnvRule& r) {
      auto it = env.find(r.name);
      if (it == env.end()) return false;
      if (!r.value) return true;
      return r.differs ? it->second != *r.value : it->second == *r.value;
    });
    if (!meets) continue;
    std::error_code lost;
    std::string exe = fs::read_symlink(fmt::format("/proc/{}/exe", pid), lost).filename().string();
    if (exe == "torchx-stacks" || exe == "py-spy") continue;
    out.push_back(Described(pid, RankIn(env)));
  }
  return out;
}

std::optional<int> TopPythonProcess(const std::vector<ProcessStack>& processes) {
  std::set<int> pids;
  for (const ProcessStack& p : processes) pids.insert(p.pid);
  for (const ProcessStack& p : processes) {
    int ppid = ParentAndGroupOf(ReadFile(fmt::format("/proc/{}/stat", p.pid))).first;
    if (!pids.contains(ppid) && IsPythonProcess(p.pid)) return p.pid;
  }
  // Every Python one's parent is among them (a wrapper that is Python too): the first.
  for (const ProcessStack& p : processes) {
    if (IsPythonProcess(p.pid)) return p.pid;
  }
  return std::nullopt;
}

// The py-spy to attach to `pid` with, or why it cannot be done.
Result<std::string> PySpyFor(int pid) {
  if (!IsPythonProcess(pid)) return FailedPreconditionError("not a Python process");
  auto py_spy = FindPySpy(pid);
  if (!py_spy) {
    return FailedPreconditionError(
        "py-spy is not installed beside the replica's Python nor on PATH: "
        "`pip install py-spy`");
  }
  return *py_spy;
}

void DumpProcessStack(ProcessStack& p, internal::CommandRunner& runner, std::chrono::milliseconds timeout) {
  auto py_spy = PySpyFor(p.pid);
  if (!py_spy) {
    p.error = py_spy.error().message();
    return;
  }
  auto ran = runner.Run({*py_spy, "dump", "--json", "--pid", std::to_string(p.pid)}, "", timeout);
  if (!ran) {
    p.error = fmt::format("py-spy: {}", ran.error().message());
    return;
  }
  if (ran->exit_code != 0) {
    p.error = AttachFailure(ran->err, ran->exit_code);
    return;
  }
  auto threads = ParsePySpyDump(ran->out, p.pid);
  if (!threads) {
    p.error = threads.error().message();
    return;
  }
  p.threads = std::move(*threads);
}

Status RecordProfile(int pid, double seconds, const std::string& output, internal::CommandRunner& runner) {
  TORCHX_ASSIGN_OR_RETURN(std::string py_spy, PySpyFor(pid));
  auto limit = std::chrono::milliseconds(static_cast<long long>(seconds * 1000)) + std::chrono::seconds(60);
  TORCHX_ASSIGN_OR_RETURN(internal::CommandResult ran,
                          runner.Run({py_spy, "record", "--pid", std::to_string(pid), "--subprocesses", "--duration",
                                      fmt::format("{}", static_cast<long long>(std::ceil(seconds))), "--format",
                                      "speedscope", "--output", output},
                                     "", limit));
  if (ran.exit_code != 0) {
    return FailedPreconditionError(fmt::format("pid {}: {}", pid, AttachFailure(ran.err, ran.exit_code)));
  }
  return OkStatus();
}

}  // namespace torchx::schedulers
