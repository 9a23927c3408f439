// The local supervisor's process launcher (see process_launcher.h).
#include "schedulers/local/process_launcher.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "schedulers/local/process_identity.h"
#include "schedulers/local/replica_child.h"

extern char** environ;

namespace torchx::schedulers::local {

int MoveFdHigh(int fd) {
  if (fd < 0 || fd >= kHighFds) return fd;
  int high = fcntl(fd, F_DUPFD_CLOEXEC, kHighFds);
  if (high < 0) return fd;  // no room up there (a low open-file limit): it stays where it is
  ::close(fd);
  return high;
}

// Resolved once per (name, PATH, cwd) instead of probing every PATH directory in every replica.
std::string ResolveProgram(const std::string& name, const std::string& path_var, const std::string& cwd) {
  if (name.find('/') != std::string::npos) return name;
  size_t start = 0;
  while (start <= path_var.size()) {
    size_t colon = path_var.find(':', start);
    if (colon == std::string::npos) colon = path_var.size();
    std::string dir = path_var.substr(start, colon - start);
    if (dir.empty()) dir = ".";
    std::string candidate = (dir[0] == '/' ? dir : cwd + "/" + dir) + "/" + name;
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = colon + 1;
  }
  return name;
}

CloneLauncher::CloneLauncher() = default;

// The supervisor's own environment (the submitter's), parsed at the first replica it starts: an
// adopted app's supervisor (detached_start.h) may never start one.
const std::map<std::string, std::string>& CloneLauncher::BaseEnv() {
  if (!base_env_parsed_) {
    for (char** e = environ; *e; ++e) {
      std::string kv(*e);
      size_t eq = kv.find('=');
      if (eq != std::string::npos) base_env_[kv.substr(0, eq)] = kv;
    }
    base_env_parsed_ = true;
  }
  return base_env_;
}

// The supervisor's variables a replica inherits: all but those its plan sets (and PATH, which
// Launch composes). Every replica of a role sets the same names, so this is worked out once per
// set of names, not per replica.
const std::vector<char*>& CloneLauncher::InheritedEnv(const std::map<std::string, std::string>& replica_env) {
  std::string names;
  for (const auto& [k, _] : replica_env) {
    names += k;
    names += '\0';
  }
  auto cached = inherited_.find(names);
  if (cached != inherited_.end()) return cached->second;
  std::vector<char*> entries;
  entries.reserve(base_env_.size());
  for (auto& [key, entry] : base_env_) {
    if (!replica_env.count(key) && key != "PATH") entries.push_back(entry.data());
  }
  return inherited_.emplace(std::move(names), std::move(entries)).first->second;
}

void CloneLauncher::Prepare(const ReplicaPlan& p, ReplicaExec& exec) {
  // The supervisor's environment (the submitter's) with the replica's variables on top, as
  // TorchX's Popen: the replica's PATH goes before the environment's, and Python output is
  // unbuffered unless someone said otherwise.
  const std::map<std::string, std::string>& base_env = BaseEnv();
  auto base_path = base_env.find("PATH");
  std::string env_path = base_path != base_env.end() ? base_path->second.substr(5) : "";
  auto path_it = p.env.find("PATH");
  std::string path_var = path_it == p.env.end()    ? env_path
                         : env_path.empty()        ? path_it->second
                         : path_it->second.empty() ? env_path
                                                   : path_it->second + ":" + env_path;
  exec.overrides.reserve(p.env.size() + 2);
  for (const auto& [k, v] : p.env) {
    if (k != "PATH") exec.overrides.push_back(k + "=" + v);
  }
  if (path_it != p.env.end() || base_path != base_env.end()) exec.overrides.push_back("PATH=" + path_var);
  if (!p.env.count("PYTHONUNBUFFERED") && !base_env.count("PYTHONUNBUFFERED"))
    exec.overrides.push_back("PYTHONUNBUFFERED=x");
  const std::vector<char*>& inherited = InheritedEnv(p.env);
  exec.envp.reserve(inherited.size() + exec.overrides.size() + 1);
  exec.envp.insert(exec.envp.end(), inherited.begin(), inherited.end());
  for (std::string& e : exec.overrides) exec.envp.push_back(e.data());
  exec.envp.push_back(nullptr);
  // execve takes `char* const*` but writes nothing through it.
  exec.argv.reserve(p.argv.size() + 1);
  for (const std::string& a : p.argv) exec.argv.push_back(const_cast<char*>(a.c_str()));
  exec.argv.push_back(nullptr);
  std::string key = p.argv[0] + '\0' + path_var + '\0' + p.cwd;
  auto cached = resolved_.find(key);
  if (cached == resolved_.end()) cached = resolved_.emplace(key, ResolveProgram(p.argv[0], path_var, p.cwd)).first;
  exec.path = cached->second;
}

Result<LaunchedProcess> CloneLauncher::Launch(const ReplicaPlan& p) {
#ifndef TORCHX_LAUNCH_WITH_FORK
  // Allocated at the first start (before any descriptor that a failure would leak) and never
  // written here: only the pages the child touches are faulted in (a zeroed vector made every
  // supervisor fault in all 64 of them).
  if (!child_stack_) child_stack_ = std::make_unique_for_overwrite<char[]>(kChildStackBytes);
#endif
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return InternalError(fmt::format("cannot create pipes: {}", strerror(errno)));
  if (pipe2(err, O_CLOEXEC) != 0) {
    int saved = errno;
    ::close(out[0]);
    ::close(out[1]);
    return InternalError(fmt::format("cannot create pipes: {}", strerror(saved)));
  }
  ReplicaExec exec;
  Prepare(p, exec);

  // The read ends live as long as the replica: up among the high descriptors, out of what the
  // next replica's child copies.
  out[0] = MoveFdHigh(out[0]);
  err[0] = MoveFdHigh(err[0]);
  ReplicaChildArgs child{exec.path.c_str(), exec.argv.data(), exec.envp.data(), p.cwd.c_str(), out[1], err[1],
                         getpid()};
  long long started_before = -1;  // see NewChildIdentity
#ifdef TORCHX_LAUNCH_WITH_FORK
  int errpipe[2] = {-1, -1};
  if (pipe2(errpipe, O_CLOEXEC) == 0) child.error_fd = errpipe[1];
  started_before = BoottimeNs();
  pid_t pid = fork();
  if (pid == 0) ReplicaChildMain(&child);
  if (errpipe[1] >= 0) ::close(errpipe[1]);
  if (pid > 0 && errpipe[0] >= 0 && ::read(errpipe[0], &child.error, sizeof(child.error)) != sizeof(child.error)) {
    child.error = 0;  // the pipe closed at exec: the program started
  }
  if (errpipe[0] >= 0) ::close(errpipe[0]);
#else
  // CLONE_VFORK: we resume once the child has exec'd (or failed), so `child` stays valid and
  // holds the exec error; CLONE_VM: no page tables to copy, unlike fork; CLONE_FILES: no
  // descriptor table to copy either. With a replica's two pipes per running replica, copying the
  // table (and closing it again at exec) made each start cost in proportion to the replicas
  // already running: the child takes a copy of the low descriptors only (ReplicaChildMain).
  child.copy_below = static_cast<unsigned>(std::max(out[1], err[1])) + 1;
  char* stack_top = child_stack_.get() + kChildStackBytes;
  started_before = BoottimeNs();
  pid_t pid = clone(&ReplicaChildMain, stack_top, CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD, &child);
#endif
  ::close(out[1]);
  ::close(err[1]);
  if (pid < 0) {
    int saved = errno;
    ::close(out[0]);
    ::close(err[0]);
    return InternalError(fmt::format("cannot start a process: {}", strerror(saved)));
  }
  LaunchedProcess proc;
  proc.pid = pid;
  proc.identity = NewChildIdentity(pid, started_before, BoottimeNs());
  proc.out_fd = out[0];
  proc.err_fd = err[0];
  fcntl(proc.out_fd, F_SETFL, O_NONBLOCK);
  fcntl(proc.err_fd, F_SETFL, O_NONBLOCK);
  if (child.error != 0) proc.exec_error = ExecErrorText(p, child.error);
  return proc;
}

std::string ExecErrorText(const ReplicaPlan& replica, int err) {
  return fmt::format("cannot start `{}` in {}: {}", replica.argv[0], replica.cwd, strerror(err));
}

Result<LaunchedProcess> AdoptingLauncher::Launch(const ReplicaPlan& replica) {
  auto it = adopted_.find({replica.role, replica.replica_id});
  if (it == adopted_.end()) return next_.Launch(replica);
  LaunchedProcess proc = std::move(it->second);
  adopted_.erase(it);
  return proc;
}

void CloneLauncher::SignalGroup(int pgid, const std::string& identity, int sig) {
  if (pgid > 0) SignalGroupOrLeftovers(pgid, identity, sig);
}

}  // namespace torchx::schedulers::local
