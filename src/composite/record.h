// What every composite's record holds the same way, whatever its kind: the header (who it is,
// where it was started, whether a cancel was asked, how it ended) and, for each child (a
// pipeline's step, a sweep's trial, a managed job's attempt), where it is in its life, the handle
// it got, its last known state and its times. A kind's record derives from RecordHeader and its
// child from ChildRecord, adding only what is its own (a step's dependencies, a trial's values, an
// attempt's target); the kernel reads and writes these parts once (record_json.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "composite/claims.h"
#include "torchx/specs/app_state.h"
#include "torchx/status.h"

namespace torchx::composite {

/// Where a child is in its life. kDone, kSkipped and kRefused are final.
enum class ChildPhase {
  kWaiting,     ///< not yet submitted (a step whose dependencies run, a trial beyond max_parallel)
  kSubmitting,  ///< claimed by a driver, not yet known to be submitted (claims.h)
  kSubmitted,   ///< its handle is recorded: its scheduler runs it
  kDone,        ///< it ran and ended (`state` is terminal), or it failed before it could run
  kSkipped,     ///< it will never run (a dependency failed, the composite was cancelled or stopped)
  kRefused,     ///< its scheduler refused it (nothing runs)
};

std::string_view ChildPhaseName(ChildPhase phase);
/// kInvalidArgument naming `kind`'s record and the valid names.
Result<ChildPhase> ParseChildPhase(std::string_view name, std::string_view kind);
inline bool IsFinal(ChildPhase p) {
  return p == ChildPhase::kDone || p == ChildPhase::kSkipped || p == ChildPhase::kRefused;
}

struct ChildRecord {
  ChildPhase phase = ChildPhase::kWaiting;
  std::string handle;  ///< once submitted
  /// The claim: the handle its dry run chose, whether its scheduler keeps it, and when it was
  /// claimed (claims.h: how a driver that finds the claim unrecorded resolves it).
  PlannedChild planned;
  /// Last known state: terminal once kDone; CANCELLED once kSkipped.
  specs::AppState state = specs::AppState::kUnsubmitted;
  std::string msg;                  ///< why it ended (in its engine's words) or why it did not run
  std::optional<double> submitted;  ///< epoch seconds, once its handle is recorded
  std::optional<double> ended;      ///< epoch seconds, when its composite first saw it end
  /// A child equal to the one read is not written again (record_store.h).
  bool operator==(const ChildRecord&) const = default;
};

struct RecordHeader {
  std::string id;
  std::string name;
  std::string session;
  std::string cwd;     ///< where the launch ran (children are submitted from it)
  double created = 0;  ///< epoch seconds
  bool cancel_requested = false;
  std::optional<specs::AppState> final_state;  ///< set once the composite has ended
  std::string msg;
};

/// What a submitted child's scheduler said, applied to it: gone (FAILED: its scheduler no longer
/// knows it), or its state (kDone with the scheduler's message once terminal). An error (the
/// scheduler did not answer) changes nothing: it is asked again. Returns whether it ended.
bool ApplyChildStatus(ChildRecord& child, const Result<std::optional<specs::AppStatus>>& seen, double now);

}  // namespace torchx::composite
