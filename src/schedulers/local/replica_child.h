// What runs in a replica's process between its clone and its exec, shared by the supervisor's
// launcher (CloneLauncher) and a caller that starts a small app's replicas itself
// (detached_start.h). The child shares its parent's memory (CLONE_VM; the parent is suspended
// until the exec), so it only makes system calls.
#pragma once

#include <sys/types.h>

// What runs on a child's own stack in its parent's memory is not instrumented: AddressSanitizer
// would take the stack switch for a corrupt stack (and say so on the caller's stderr).
#if defined(__clang__) || defined(__GNUC__)
#define TORCHX_CHILD_CODE __attribute__((no_sanitize("address")))
#else
#define TORCHX_CHILD_CODE
#endif

// ThreadSanitizer cannot follow a CLONE_VM child (the child would run on the parent's sanitizer
// state): a TSan build forks instead, both in the supervisor's launcher (process_launcher.cc, an
// exec failure reported through a close-on-exec pipe) and in a caller's detached start
// (detached_start.cc, SpawnMode::kFork).
#if defined(__SANITIZE_THREAD__)
#define TORCHX_LAUNCH_WITH_FORK 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TORCHX_LAUNCH_WITH_FORK 1
#endif
#endif

namespace torchx::schedulers::local {

struct ReplicaChildArgs {
  const char* path;
  char* const* argv;
  char* const* envp;
  const char* cwd;
  int out_fd;  ///< the write ends of its stdout and stderr pipes
  int err_fd;
  pid_t supervisor;         ///< its parent: a child whose parent is already gone exits at once
  unsigned copy_below = 0;  ///< a CLONE_FILES child takes a table of the descriptors below this
  int error = 0;            ///< errno of what failed before or at the exec (the child exits with 127)
  int error_fd = -1;        ///< a forked child writes `error` here (TORCHX_LAUNCH_WITH_FORK)
};

/// The child: its own process group, SIGKILL when its parent dies, default signals and an empty
/// mask, stdin on /dev/null, stdout and stderr on the pipes, the replica's cwd, then the exec.
TORCHX_CHILD_CODE int ReplicaChildMain(void* args);

}  // namespace torchx::schedulers::local
