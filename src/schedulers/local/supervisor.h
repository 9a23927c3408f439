// The per-app supervisor of the local scheduler: a detached process that owns the app's
// replicas. It starts each replica in its own process group with its output piped back, writes
// stdout.log / stderr.log / combined.log, reaps exits, applies the retry policy, and on SIGTERM
// (a cancel) stops every replica: SIGTERM to each process group, SIGKILL after the grace period.
// Every transition is written to the state store. Event-driven: epoll over a signalfd, a timerfd
// and the output pipes; it uses no CPU while the replicas run quietly. Its decisions are a pure
// policy (supervisor_policy.h); the rest is thin OS pieces (docs/local-scheduler.md lists them).
#pragma once

#include <string>
#include <vector>

#include "schedulers/local/detached_start.h"
#include "schedulers/local/watchdog.h"

namespace torchx::schedulers::local {

/// Runs app `app_id` of the store in `state_dir` to a terminal state. Writes one byte to
/// `ready_fd` (when >= 0) once it has recorded itself in the store and started the replicas,
/// then closes it. `adopted`: the replicas were started already, as this process's children, and
/// recorded with it (detached_start.h), in the plan's order. Returns the process exit code (0
/// unless the supervisor itself failed).
/// `watchdog`: one started already (an adopted start's, before the caller's commit), else the
/// supervisor starts its own.
int RunSupervisor(const std::string& state_dir, const std::string& app_id, int ready_fd,
                  const std::vector<AdoptedReplica>& adopted = {}, Watchdog* watchdog = nullptr);

/// Entry point of the torchx-supervisor executable: `torchx-supervisor <state_dir> <app_id>`
/// forks once so the caller can reap it at once; the child runs the app, the parent exits when
/// the child is ready. `torchx-supervisor --adopt <fd> <state_dir> <app_id>` takes over the
/// replicas a caller started (detached_start.h), once the caller says on `fd` that it recorded them.
int SupervisorMain(int argc, char** argv);

}  // namespace torchx::schedulers::local
