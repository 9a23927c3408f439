// Numbered fault points of the composite driver (docs/reliability.md, "The driver's fault
// points"): places in the kernel where a driver may die for real (kill -9, the OOM killer, a
// reboot), named so a test can kill it exactly there. Inert unless the driver armed them and the
// environment names one:
//   TORCHX_FAULT_POINT=<name>   the point to die at (or several, comma-separated: a point reached
//                               only after another, such as claims_resolved after scheduled);
//   TORCHX_FAULT_LOG=<file>     where each death is written first (one line, the point's name);
//   TORCHX_FAULT_TIMES=<n>      die at each at most n times, counting the log's lines (default 1),
//                               so the drivers revived after it get past the point.
// Only the composite driver arms them: a launcher or a `status` passing the same places is never
// killed.
#pragma once

#include <string_view>

namespace torchx::composite {

/// The points, in the order a driver meets them; docs/reliability.md lists the same.
inline constexpr std::string_view kFaultPoints[] = {
    "driver_started",   ///< F1: the driver holds the lock and has told its launcher so
    "claimed",          ///< F2: children claimed (recorded kSubmitting), none submitted yet
    "scheduled",        ///< F3: children submitted to their schedulers, their handles not recorded
    "recorded",         ///< F4: the handles recorded
    "claims_resolved",  ///< F5: a dead driver's claims adopted, claimed again or failed
    "turn_done",        ///< F6: a turn of the driver loop done, before its wait
};

/// Arms the fault points in this process (the composite driver calls it once, at its start).
void ArmFaultPoints();

/// Dies here by SIGKILL when armed and this is the point the environment names (and it has died
/// there fewer than TORCHX_FAULT_TIMES times). `point` is one of kFaultPoints.
void FaultPoint(std::string_view point);

}  // namespace torchx::composite
