#include "managed/policy.h"

#include <algorithm>

#include <fmt/format.h>

namespace torchx::managed {
namespace {

using schedulers::FailureCause;
using specs::AppState;

Action Of(ActionKind kind) {
  Action a;
  a.kind = kind;
  return a;
}

bool Recoverable(const ManagedRecord& r, const std::string& cause) {
  return std::find(r.recover_on.begin(), r.recover_on.end(), cause) != r.recover_on.end();
}

// "attempt 2 (slurm (partition=a)): node_failure: slurm job 12: a node it ran on failed"
std::string Outcome(const ManagedRecord& r, const AttemptRecord& a) {
  std::string what = a.cause.empty() ? std::string(specs::AppStateName(a.state)) : a.cause;
  return fmt::format("attempt {} on {}: {}{}", a.index, r.targets[a.target].label, what,
                     a.msg.empty() ? "" : ": " + a.msg);
}

// The next target, or the end of the run naming what happened on each target.
Action NextTarget(const ManagedRecord& r, const AttemptRecord& last, const std::string& why) {
  if (last.target + 1 < static_cast<int>(r.targets.size())) {
    Action a = Of(ActionKind::kSubmit);
    a.target = last.target + 1;
    a.why = fmt::format("failover from {}: {}", r.targets[last.target].label, why);
    return a;
  }
  std::string per_target;
  for (size_t t = 0; t < r.targets.size(); ++t) {
    const AttemptRecord* seen = nullptr;
    for (const AttemptRecord& a : r.attempts) {
      if (a.target == static_cast<int>(t)) seen = &a;
    }
    per_target += fmt::format("{}{}", per_target.empty() ? "" : "; ",
                              seen ? Outcome(r, *seen) : r.targets[t].label + ": not tried");
  }
  Action a = Of(ActionKind::kFinish);
  a.final_state = AppState::kFailed;
  a.msg = fmt::format("no target could run it ({}): {}", why, per_target);
  return a;
}

}  // namespace

void Observe(ManagedRecord& r, const Observation& seen, double now) {
  if (r.attempts.empty()) return;
  AttemptRecord& a = r.attempts.MutBack();
  if (a.phase != ChildPhase::kSubmitted) return;
  if (!seen.unreachable.empty()) {
    r.msg = fmt::format("attempt {}: its scheduler cannot be reached: {}", a.index, seen.unreachable);
    r.msg_transient = true;
    return;
  }
  if (r.msg_transient) {
    r.msg.clear();
    r.msg_transient = false;
  }
  if (!seen.state) {
    a.state = AppState::kFailed;
    a.phase = ChildPhase::kDone;
    a.ended = now;
    if (a.cause.empty()) {
      // `seen` lags a look by up to kSeenRecordedEvery: an app seen within the window is never
      // judged older than it is.
      bool recent = a.seen && now - *a.seen <= kLostIfSeenWithin + kSeenRecordedEvery;
      a.cause = std::string(schedulers::FailureCauseName(recent ? FailureCause::kEngineLost : FailureCause::kUnknown));
      a.msg = recent ? fmt::format("its scheduler no longer knows {}", a.handle)
                     : fmt::format("its scheduler no longer knows {}, last seen {}: it may have ended unwatched",
                                   a.handle, a.seen ? fmt::format("{:.0f} s before", now - *a.seen) : "never");
    }
    return;
  }
  if (!a.seen || now - *a.seen >= kSeenRecordedEvery) a.seen = now;
  a.state = *seen.state;
  if (a.state == AppState::kRunning && !a.started) a.started = now;
  // It started after all (a cancel for start_timeout that did not take): the timeout is not why it ends.
  if (a.state == AppState::kRunning && a.cause == kStartTimeout) {
    a.cause.clear();
    a.msg.clear();
  }
  if (!specs::IsTerminal(a.state)) return;
  a.phase = ChildPhase::kDone;
  a.ended = now;
  if (a.state == AppState::kSucceeded || !a.cause.empty()) return;
  if (seen.failure) {
    a.cause = std::string(schedulers::FailureCauseName(seen.failure->cause));
    a.msg = seen.failure->reason;
  } else {
    a.cause = std::string(schedulers::FailureCauseName(a.state == AppState::kCancelled ? FailureCause::kCancelled
                                                                                       : FailureCause::kUnknown));
  }
}

Action Decide(const ManagedRecord& r, double now) {
  if (r.final_state) return Of(ActionKind::kNothing);
  const AttemptRecord* last = r.attempts.empty() ? nullptr : &r.attempts.back();
  bool live = last && last->phase == ChildPhase::kSubmitted && !specs::IsTerminal(last->state);
  if (r.cancel_requested) {
    if (live) return Of(ActionKind::kCancel);
    if (last && last->phase == ChildPhase::kSubmitting) return Of(ActionKind::kWait);
    Action a = Of(ActionKind::kFinish);
    a.final_state = AppState::kCancelled;
    a.msg = "cancelled";
    return a;
  }
  if (!last) {
    Action a = Of(ActionKind::kSubmit);
    a.why = "first attempt";
    return a;
  }
  if (last->phase == ChildPhase::kSubmitting) return Of(ActionKind::kWait);
  if (live) {
    bool waiting = !last->started && (last->state == AppState::kSubmitted || last->state == AppState::kPending ||
                                      last->state == AppState::kUnsubmitted);
    if (r.start_timeout && waiting && last->submitted && now - *last->submitted > *r.start_timeout) {
      Action a = Of(ActionKind::kCancel);
      a.cause = std::string(kStartTimeout);
      return a;
    }
    return Of(ActionKind::kWait);
  }
  if (last->phase == ChildPhase::kSubmitted) return Of(ActionKind::kWait);  // ended, not yet classified
  if (last->state == AppState::kSucceeded) {
    Action a = Of(ActionKind::kFinish);
    a.final_state = AppState::kSucceeded;
    int recoveries = RecoveryCount(r);
    if (recoveries > 0) a.msg = fmt::format("succeeded after {} recover{}", recoveries, recoveries == 1 ? "y" : "ies");
    return a;
  }
  const std::string cancelled(schedulers::FailureCauseName(FailureCause::kCancelled));
  if (last->cause == cancelled) {
    Action a = Of(ActionKind::kFinish);
    a.final_state = AppState::kCancelled;
    a.msg = fmt::format("{} (cancelled outside the launcher: not recovered)", Outcome(r, *last));
    return a;
  }
  if (last->cause == kNeverSubmitted) {
    Action a = Of(ActionKind::kSubmit);
    a.target = last->target;
    a.why = fmt::format("attempt {} again: its launcher died before submitting it", last->index);
    return a;
  }
  if (last->cause == kRefused || last->cause == kStartTimeout) {
    return NextTarget(r, *last,
                      last->cause == kRefused ? fmt::format("attempt {} refused", last->index)
                                              : fmt::format("attempt {} did not start in time", last->index));
  }
  if (Recoverable(r, last->cause)) {
    int on_target = 0;
    for (const AttemptRecord& a : r.attempts) {
      if (a.target == last->target && a.phase == ChildPhase::kDone && Recoverable(r, a.cause)) ++on_target;
    }
    if (on_target <= r.max_recoveries) {
      Action a = Of(ActionKind::kSubmit);
      a.target = last->target;
      a.why = fmt::format("recovery {} after {}", RecoveryCount(r) + 1, last->cause);
      return a;
    }
    return NextTarget(r, *last,
                      fmt::format("{} failure{} on {} (max_recoveries={})", on_target, on_target == 1 ? "" : "s",
                                  r.targets[last->target].label, r.max_recoveries));
  }
  Action a = Of(ActionKind::kFinish);
  a.final_state = AppState::kFailed;
  a.msg = fmt::format("{} (not recovered: --recover_on {} would)", Outcome(r, *last), last->cause);
  return a;
}

int RecoveryCount(const ManagedRecord& r) {
  int n = 0;
  for (size_t i = 1; i < r.attempts.size(); ++i) {
    const std::string& prev = r.attempts[i - 1].cause;
    if (prev != kNeverSubmitted && prev != kRefused && prev != kStartTimeout) ++n;
  }
  return n;
}

AppState LiveState(const ManagedRecord& r) {
  if (r.final_state) return *r.final_state;
  if (r.attempts.empty()) return AppState::kSubmitted;
  const AttemptRecord& a = r.attempts.back();
  if (a.phase == ChildPhase::kSubmitted && !specs::IsTerminal(a.state)) {
    return a.state == AppState::kUnsubmitted ? AppState::kSubmitted : a.state;
  }
  return AppState::kPending;  // between attempts: the next is being decided or submitted
}

}  // namespace torchx::managed
