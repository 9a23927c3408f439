// Why a local_cwd app did not succeed (Capability::kFailureClassification): a pure function of
// what the store holds, so managed jobs can tell a lost supervisor or host (recoverable) from the
// app's own exit (the user's).
#pragma once

#include <string_view>
#include <vector>

#include "schedulers/local/state_store.h"
#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers::local {

/// The messages LocalScheduler::CheckLiveness records for an app whose supervisor is gone; the
/// classifier reads them back.
inline constexpr std::string_view kSupervisorNeverStarted = "the supervisor never started";
inline constexpr std::string_view kHostRebooted = "the host rebooted while the app was running";
inline constexpr std::string_view kSupervisorDiedPrefix = "the app's supervisor (pid ";

/// CANCELLED: cancelled. FAILED with a liveness message above: supervisor_lost (node_failure for
/// a reboot). Otherwise the first failed replica's exit: a non-zero code is user_error, a signal
/// unknown (the OOM killer and a person's kill -9 look the same here). `app.state` must be FAILED
/// or CANCELLED.
FailureReport ClassifyLocalEnd(const AppRecord& app, const std::vector<ReplicaRecord>& replicas);

}  // namespace torchx::schedulers::local
