// The seam under the local scheduler's start paths (as LevelDB's Env or ninja's CommandRunner):
// what the caller of `run` asks of the operating system to start an app. LocalScheduler decides
// which path an app takes, records it and runs the warm protocol over this interface; a test
// gives it a fake (local_start_test.cc) and drives the supervisor's end of the links itself.
//
// The operating system's starter clones (CLONE_VM | CLONE_VFORK: the caller waits for each exec
// without copying its memory). ThreadSanitizer cannot follow a child that shares its parent's
// memory, so a TSan build forks instead (SpawnMode::kFork): the same chain of children runs the
// same code, and the caller's logic (the pool, the protocol, the commit) runs under TSan.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "schedulers/local/app_plan.h"
#include "schedulers/local/detached_start.h"
#include "torchx/status.h"

namespace torchx::schedulers::local {

class ProcessStarter {
 public:
  virtual ~ProcessStarter() = default;

  /// The direct path: runs `argv` (argv[0] the program) in a session of its own, with /dev/null
  /// as stdin, stdout and stderr and this process's environment, and waits for it to exit. Its
  /// wait status; kUnavailable naming the program when it cannot be started.
  virtual Result<int> RunToExit(const std::vector<std::string>& argv) = 0;

  /// The detached path (detached_start.h): the replicas of `plan` and `supervisor --adopt`
  /// started, nothing recorded yet. An error means nothing was started.
  virtual Result<std::unique_ptr<DetachedStart>> StartDetached(const std::string& supervisor,
                                                               const std::string& state_dir, const std::string& app_id,
                                                               const AppPlan& plan) = 0;

  /// This process's environment now, "K=V" each: what a warm supervisor gives the next app.
  virtual std::vector<std::string> Environment() = 0;
  /// What a warm supervisor must share with this thread to start its apps (warm_supervisor.h).
  virtual std::string LaunchContext() = 0;
  /// This process's id: a warm supervisor serves only the process that started it.
  virtual int ProcessId() = 0;
};

/// The operating system's starter: clones, or forks in a ThreadSanitizer build (DefaultSpawnMode).
std::shared_ptr<ProcessStarter> OsProcessStarter(SpawnMode mode = DefaultSpawnMode());

}  // namespace torchx::schedulers::local
