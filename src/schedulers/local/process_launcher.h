// Starting and signalling the local supervisor's replica processes. ProcessLauncher is the seam
// between the supervisor and the OS; CloneLauncher is the real one: each replica is its own
// process group, dies with the supervisor (PDEATHSIG), has stdin on /dev/null and its stdout and
// stderr on pipes back to the supervisor, and is started with clone(CLONE_VM | CLONE_VFORK),
// which copies no page tables however large the supervisor's memory.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "schedulers/local/app_plan.h"
#include "torchx/status.h"

namespace torchx::schedulers::local {

struct LaunchedProcess {
  int pid = 0;           ///< also its process group id
  std::string identity;  ///< ProcessIdentity(pid), taken at once
  int out_fd = -1;       ///< read ends of its stdout and stderr pipes (close-on-exec, non-blocking)
  int err_fd = -1;
  /// Set when the process started but could not exec (it exits with 127), e.g.
  /// "cannot start `prog` in /dir: No such file or directory".
  std::string exec_error;
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  /// The error says why no process could be started ("cannot create pipes: ...", "cannot start
  /// a process: ...").
  virtual Result<LaunchedProcess> Launch(const ReplicaPlan& replica) = 0;
  /// Signals process group `pgid` while its leader is still `identity`, or its leftovers (see
  /// SignalGroupOrLeftovers).
  virtual void SignalGroup(int pgid, const std::string& identity, int sig) = 0;
};

/// What execve needs to start one replica: the program its PATH finds, its argv (pointing into the
/// plan's strings) and its environment. Filled in place: `envp` points into `overrides`.
struct ReplicaExec {
  ReplicaExec() = default;
  ReplicaExec(const ReplicaExec&) = delete;
  ReplicaExec& operator=(const ReplicaExec&) = delete;
  std::string path;
  std::vector<char*> argv;
  std::vector<std::string> overrides;  ///< the replica's variables, its PATH, PYTHONUNBUFFERED
  std::vector<char*> envp;
};

class CloneLauncher final : public ProcessLauncher {
 public:
  CloneLauncher();
  Result<LaunchedProcess> Launch(const ReplicaPlan& replica) override;
  /// The exec of `replica` as Launch makes it: this process's environment (the submitter's) with
  /// the replica's variables on top, its PATH before the environment's, as TorchX's Popen.
  void Prepare(const ReplicaPlan& replica, ReplicaExec& exec);
  void SignalGroup(int pgid, const std::string& identity, int sig) override;

 private:
  const std::map<std::string, std::string>& BaseEnv();
  const std::vector<char*>& InheritedEnv(const std::map<std::string, std::string>& replica_env);

  static constexpr size_t kChildStackBytes = 256 * 1024;
  bool base_env_parsed_ = false;
  std::map<std::string, std::string> base_env_;          // the supervisor's environment: name -> "NAME=value"
  std::map<std::string, std::vector<char*>> inherited_;  // replica env names -> base_env_ entries kept
  std::map<std::string, std::string> resolved_;          // program lookups, see ResolveProgram
  std::unique_ptr<char[]> child_stack_;
};

/// Hands out processes started before the supervisor (a small app's replicas, started by the
/// caller of `run`: detached_start.h) for their replicas' first launch; every other launch goes
/// to `next`.
class AdoptingLauncher final : public ProcessLauncher {
 public:
  /// `adopted`: by (role, replica id).
  AdoptingLauncher(ProcessLauncher& next, std::map<std::pair<std::string, int>, LaunchedProcess> adopted)
      : next_(next), adopted_(std::move(adopted)) {}
  Result<LaunchedProcess> Launch(const ReplicaPlan& replica) override;
  void SignalGroup(int pgid, const std::string& identity, int sig) override { next_.SignalGroup(pgid, identity, sig); }

 private:
  ProcessLauncher& next_;
  std::map<std::pair<std::string, int>, LaunchedProcess> adopted_;
};

/// LaunchedProcess::exec_error for a replica whose exec failed with `err`.
std::string ExecErrorText(const ReplicaPlan& replica, int err);

/// Descriptors the supervisor keeps while replicas run (their pipes' read ends, their log files)
/// go at or above this, so that a replica's child copies only the few below it (CloneLauncher).
inline constexpr int kHighFds = 256;
/// `fd` moved to the lowest free number at or above kHighFds (close-on-exec); `fd` itself where
/// it is already there or there is no room (the open-file limit).
int MoveFdHigh(int fd);

/// The program execvp would run for `name` on `path_var`; relative PATH entries are relative to
/// `cwd`. `name` itself when it has a '/' or is not found (execve then reports ENOENT).
std::string ResolveProgram(const std::string& name, const std::string& path_var, const std::string& cwd);

}  // namespace torchx::schedulers::local
