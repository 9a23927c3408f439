// Why a local_cwd app did not succeed (Capability::kFailureClassification): a pure function of
// what the store holds. The cause is a fact recorded once, by whoever decided the app's end (its
// supervisor, the watchdog, a reader that found the supervisor gone: AppRecord::end_cause); the
// messages beside it are for people and are never read back.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "schedulers/local/state_store.h"
#include "torchx/schedulers/failure_cause.h"

namespace torchx::schedulers::local {

/// The messages LocalScheduler::CheckLiveness records for an app whose supervisor is gone, with
/// kSupervisorLost (kNodeFailure for a reboot).
inline constexpr std::string_view kSupervisorNeverStarted = "the supervisor never started";
inline constexpr std::string_view kHostRebooted = "the host rebooted while the app was running";
/// What the watchdog records, with kSupervisorLost, when the supervisor dies before the app's end.
inline constexpr std::string_view kSupervisorDiedWatchdog =
    "the app's supervisor died unexpectedly; its replicas were stopped";

/// Why a replica's exit ends its app, as the supervisor records it: a non-zero code is the
/// user's (kUserError, 127 included: the program could not be started); a signal the launcher
/// did not send is kUnknown (the OOM killer and a person's kill -9 look the same here).
FailureCause CauseOfReplicaExit(int exit_code);

/// CANCELLED: cancelled. FAILED: the recorded cause; a record from before causes were recorded
/// reads its first failed replica's exit code as CauseOfReplicaExit does, else kUnknown. The
/// reason is the app's message (a signal's kill in words).
/// `app.state` must be FAILED or CANCELLED.
FailureReport ClassifyLocalEnd(const AppRecord& app, const std::vector<ReplicaRecord>& replicas);

}  // namespace torchx::schedulers::local
