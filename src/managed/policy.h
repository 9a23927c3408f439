// The rules of a managed run, pure (as the local supervisor's policy): what a look at the current
// attempt changes in the record (Observe), and what the driver does next (Decide), from the record
// and the time alone. The driver (driver.cc) does the I/O around them; policy_test.cc tables them
// on a fake clock.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "managed/record.h"
#include "torchx/schedulers/scheduler.h"

namespace torchx::managed {

/// What the driver saw of the current (last, submitted) attempt.
struct Observation {
  /// nullopt: its scheduler no longer knows the app (the engine lost it).
  std::optional<specs::AppState> state;
  /// For an attempt that ended other than SUCCEEDED: its scheduler's classification.
  std::optional<schedulers::FailureReport> failure;
  /// The scheduler could not be asked (an outage): nothing changes but the run's message.
  std::string unreachable;
};

/// Applies `seen` to the last attempt: its state, when it started (first seen RUNNING) and, once
/// it has ended, its cause and reason (a cause set before, e.g. start_timeout by the driver that
/// cancelled it, is kept).
void Observe(ManagedRecord& r, const Observation& seen, double now);

enum class ActionKind {
  kNothing,  ///< the run has ended
  kWait,     ///< the attempt runs (or waits), or one is being submitted: look again later
  kSubmit,   ///< a new attempt on `target`, made for `why`
  kCancel,   ///< cancel the current attempt; `cause` ("" for the user's cancel) is recorded first
  kFinish,   ///< the run ends `final_state` with `msg`
};

struct Action {
  ActionKind kind = ActionKind::kWait;
  int target = 0;
  std::string why;
  std::string cause;
  specs::AppState final_state = specs::AppState::kUnknown;
  std::string msg;
};

/// The next step:
/// - cancel asked: cancel the running attempt, then end CANCELLED;
/// - no attempt yet: submit to the first target;
/// - an attempt waiting to start past start_timeout: cancel it (start_timeout), then the next target;
/// - an attempt that ended: SUCCEEDED ends the run; `cancelled` (outside the launcher) ends it
///   CANCELLED; a cause in recover_on is recovered on the same target while that target has had at
///   most max_recoveries of them, then the next target; refused and start_timeout go to the next
///   target; any other cause ends the run FAILED, saying which --recover_on would recover it. With
///   no next target the run ends FAILED naming each target's last outcome.
Action Decide(const ManagedRecord& r, double now);

/// Recoveries so far: attempts made after a failure (not the first, not a resubmission of one
/// that was never submitted).
int RecoveryCount(const ManagedRecord& r);

/// The run's state for the views: final, else the current attempt's, PENDING between attempts.
specs::AppState LiveState(const ManagedRecord& r);

}  // namespace torchx::managed
