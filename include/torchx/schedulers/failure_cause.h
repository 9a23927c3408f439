// Why an app ended other than SUCCEEDED: one enum that every back-end's status mapping, the local
// supervisor and its watchdog record, and that managed jobs read to decide what to recover. A
// header of its own so that the local state store and the supervisor (which record it) need not
// include the scheduler interface.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "torchx/status.h"

namespace torchx::schedulers {

/// Why an app ended other than SUCCEEDED, as its engine reports it (Capability::kFailureClassification).
/// Managed jobs recover the infrastructure causes (node failure, preemption, eviction, a lost
/// engine or supervisor) and leave the rest to the user unless asked (docs/managed.md).
enum class FailureCause {
  kUserError,       ///< the app's own non-zero exit
  kOutOfMemory,     ///< killed for exceeding its memory (an OOM kill, Slurm's OUT_OF_MEMORY)
  kNodeFailure,     ///< a node it ran on failed or could not boot (Slurm's NODE_FAIL, BOOT_FAIL; a reboot)
  kPreemption,      ///< preempted for other work (Slurm's PREEMPTED)
  kTimeLimit,       ///< past its time limit (Slurm's TIMEOUT, DEADLINE)
  kEviction,        ///< its pod or container evicted by the engine (a kubelet's eviction)
  kEngineLost,      ///< the engine no longer knows the app, or lost track of it
  kSupervisorLost,  ///< what watched its processes died (local_cwd's supervisor)
  kCancelled,       ///< cancelled (scancel, docker kill, torchx cancel): a person's decision
  kUnknown,         ///< the engine says it failed but not why
};
/// "user_error", "out_of_memory", "node_failure", "preemption", "time_limit", "eviction",
/// "engine_lost", "supervisor_lost", "cancelled", "unknown".
std::string_view FailureCauseName(FailureCause c);
/// A name above; the error names the field `what` and lists the choices.
Result<FailureCause> ParseFailureCause(std::string_view name, std::string_view what = "failure cause");
/// Every cause, in enum order.
std::vector<FailureCause> AllFailureCauses();

/// Why an app ended: its cause and the engine's words for it ("node node2 failed (NODE_FAIL)").
struct FailureReport {
  FailureCause cause = FailureCause::kUnknown;
  std::string reason;
};

}  // namespace torchx::schedulers
