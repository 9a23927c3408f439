#include "managed/driver.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "composite/children.h"
#include "composite/claims.h"
#include "composite/composite_scheduler.h"
#include "composite/fault_points.h"
#include "core/daemon.h"
#include "managed/kind.h"
#include "managed/policy.h"
#include "torchx/managed/managed.h"
#include "torchx/specs/app_handle.h"

namespace torchx::managed {
namespace {

using specs::AppState;

class RunnerAttemptBackend final : public composite::OverRunner<AttemptBackend> {
 public:
  using OverRunner::OverRunner;
  Result<schedulers::DryRunInfo> DryRun(specs::AppDef app, const std::string& scheduler,
                                        const std::string& cfg_json) override {
    TORCHX_ASSIGN_OR_RETURN(specs::RunOpts opts, runner().SchedulerRunOpts(scheduler));
    TORCHX_ASSIGN_OR_RETURN(specs::Cfg cfg, opts.CfgFromJson(cfg_json));
    return runner().DryRun(std::move(app), scheduler, cfg);
  }
};

// The current attempt as its scheduler reports it now.
Observation Look(AttemptBackend& backend, const AttemptRecord& a) {
  Observation seen;
  auto status = backend.Status(a.handle);
  if (!status) {  // the scheduler cannot say now (an outage, a plugin missing here): ask again later
    seen.unreachable = status.error().message();
    return seen;
  }
  if (!*status) return seen;  // gone: its scheduler no longer knows it
  seen.state = (*status)->state;
  if (specs::IsTerminal(*seen.state) && *seen.state != AppState::kSucceeded) {
    auto report = backend.Classify(a.handle);
    if (!report) {  // a failed classification is asked again, never guessed
      seen.state.reset();
      seen.unreachable = "classifying its end: " + report.error().message();
      return seen;
    }
    if (*report) {
      seen.failure = **report;
    } else if (!(*status)->msg.empty()) {
      seen.failure =
          schedulers::FailureReport{*seen.state == AppState::kCancelled ? schedulers::FailureCause::kCancelled
                                                                        : schedulers::FailureCause::kUnknown,
                                    (*status)->msg};
    }
  }
  return seen;
}

Status Submit(ManagedStore& store, const std::string& id, AttemptBackend& backend, const ManagedRecord& r,
              const Action& action, double now) {
  AttemptRecord a;
  a.index = static_cast<int>(r.attempts.size());
  a.target = action.target;
  a.why = action.why;
  const TargetRecord& target = r.targets[action.target];
  auto refuse = [&](const std::string& why) {
    return store
        .Update(id,
                [&](ManagedRecord& cur) {
                  if (cur.final_state || static_cast<int>(cur.attempts.size()) != a.index) return OkStatus();
                  AttemptRecord refused = a;
                  refused.phase = ChildPhase::kRefused;
                  refused.cause = std::string(kRefused);
                  refused.msg = why;
                  refused.ended = now;
                  cur.attempts.push_back(std::move(refused));
                  return OkStatus();
                })
        .status();
  };
  auto app = AttemptApp(r, a.index);
  if (!app) return refuse(app.error().message());
  auto info = backend.DryRun(std::move(*app), target.scheduler, target.cfg_json);
  if (!info) return refuse(info.error().message());
  a.planned = composite::PlanClaim(*info, r.session);
  a.planned.claimed = now;
  // Claimed before it is sent, so a driver that dies in between is found out by the next one.
  bool claimed = false;
  TORCHX_RETURN_IF_ERROR(store
                             .Update(id,
                                     [&](ManagedRecord& cur) {
                                       if (cur.final_state || cur.cancel_requested ||
                                           static_cast<int>(cur.attempts.size()) != a.index) {
                                         return OkStatus();
                                       }
                                       cur.attempts.push_back(a);
                                       claimed = true;
                                       return OkStatus();
                                     })
                             .status());
  if (!claimed) return OkStatus();
  composite::FaultPoint("claimed");
  // A recovery: the attempt before it is stopped first, if any of it still runs (a het job's other
  // components), so two attempts never write the same checkpoints.
  if (a.index > 0 && !r.attempts.back().handle.empty()) (void)backend.Cancel(r.attempts.back().handle);
  auto handle = backend.Schedule(*info);
  composite::FaultPoint("scheduled");
  if (!handle && !a.planned.handle.empty()) {
    // A submission that failed half-way (some replicas started) is stopped: it is recorded as not run.
    (void)backend.Cancel(a.planned.handle);
  }
  bool retry = !handle && handle.error().code() == StatusCode::kUnavailable &&
               now - r.submit_retry_since.value_or(now) < kSubmitRetrySeconds;
  auto recorded = store.Update(id, [&](ManagedRecord& cur) {
    if (retry) {  // the engine cannot be reached: the same attempt is made again next turn
      cur.attempts.pop_back();
      if (!cur.submit_retry_since) cur.submit_retry_since = now;
      cur.msg = fmt::format("attempt {}: {} cannot be reached, trying again: {}", a.index, target.label,
                            handle.error().message());
      cur.msg_transient = true;
      return OkStatus();
    }
    cur.submit_retry_since.reset();
    if (cur.msg_transient) {
      cur.msg.clear();
      cur.msg_transient = false;
    }
    AttemptRecord& mine = cur.attempts.Mut(a.index);
    if (!handle) {
      mine.phase = ChildPhase::kRefused;
      mine.cause = std::string(kRefused);
      mine.msg = handle.error().message();
      mine.ended = now;
      return OkStatus();
    }
    mine.phase = ChildPhase::kSubmitted;
    mine.handle = *handle;
    mine.state = AppState::kSubmitted;
    mine.submitted = now;
    mine.seen = now;
    return OkStatus();
  });
  if (!recorded && handle) (void)backend.Cancel(*handle);  // unrecorded: it must not run unwatched
  if (recorded) composite::FaultPoint("recorded");
  return recorded.status();
}

}  // namespace

std::unique_ptr<AttemptBackend> MakeRunnerAttemptBackend(runner::Runner& runner) {
  return std::make_unique<RunnerAttemptBackend>(runner);
}

Status ResumeSubmitting(ManagedStore& store, const std::string& id, AttemptBackend& backend, double now) {
  TORCHX_ASSIGN_OR_RETURN(auto record, store.Get(id));
  if (!record || record->final_state || record->attempts.empty()) return OkStatus();
  const AttemptRecord& last = record->attempts.back();
  if (last.phase != ChildPhase::kSubmitting) return OkStatus();
  const TargetRecord& target = record->targets[last.target];
  std::optional<std::string> found;  // the handle it was submitted under
  // "Not there" proves it was never submitted only where this scheduler is known to keep the id
  // its dry run chose: it says so (DryRunInfo::app_id_is_final), or an earlier attempt on it came
  // back under its planned id (a plugin may pick its own at submission: the app would run twice).
  composite::PlannedChild planned = last.planned;
  for (const AttemptRecord& a : record->attempts) {
    if (&a == &last || a.handle.empty() || a.planned.handle.empty()) continue;
    if (record->targets[a.target].scheduler != target.scheduler) continue;
    planned.id_is_final = planned.id_is_final || a.handle == a.planned.handle;
  }
  // Where the scheduler picks ids at submission, the claim's key finds the job (Slurm: its comment).
  TORCHX_ASSIGN_OR_RETURN(composite::ClaimFate fate,
                          composite::ResolveClaim(planned, now, composite::LookupThrough(backend)));
  if (fate == composite::ClaimFate::kWait) return OkStatus();  // a start may still be recorded: next turn
  if (fate == composite::ClaimFate::kAdopt) found = planned.handle;
  bool unknowable = fate == composite::ClaimFate::kUnknowable;
  auto resolved = store.Update(id, [&](ManagedRecord& cur) {
    AttemptRecord& a = cur.attempts.MutBack();
    if (a.index != last.index || a.phase != ChildPhase::kSubmitting) return OkStatus();
    if (found) {
      a.phase = ChildPhase::kSubmitted;
      a.handle = *found;
      a.state = AppState::kSubmitted;
      a.submitted = now;
    } else if (!unknowable) {
      a.phase = ChildPhase::kDone;
      a.state = AppState::kFailed;
      a.cause = std::string(kNeverSubmitted);
      a.msg = a.planned.handle.empty() ? fmt::format("{} has no job tagged {}", target.scheduler, a.planned.key)
                                       : fmt::format("{} has no app {}", target.scheduler, a.planned.handle);
      a.ended = now;
    } else {
      a.phase = ChildPhase::kDone;
      a.state = AppState::kUnknown;
      a.ended = now;
      cur.final_state = AppState::kFailed;
      cur.msg_transient = false;
      cur.msg = fmt::format(
          "the managed job's driver stopped while submitting attempt {} to {}, and that scheduler is not "
          "known to keep the id chosen before submitting: it was not submitted again, so as not to run it "
          "twice; check `torchx list -s {}`",
          a.index, target.label, target.scheduler);
    }
    return OkStatus();
  });
  if (resolved) composite::FaultPoint("claims_resolved");
  return resolved.status();
}

Result<ManagedRecord> Turn(ManagedStore& store, const std::string& id, AttemptBackend& backend, double now) {
  TORCHX_ASSIGN_OR_RETURN(auto got, store.Get(id));
  if (!got) return NotFoundError(fmt::format("managed job {} does not exist", id));
  ManagedRecord r = std::move(*got);
  if (r.final_state) return r;
  if (!r.attempts.empty() && r.attempts.back().phase == ChildPhase::kSubmitted) {
    Observation seen = Look(backend, r.attempts.back());
    int index = r.attempts.back().index;
    TORCHX_ASSIGN_OR_RETURN(r, store.Update(id, [&](ManagedRecord& cur) {
      if (!cur.attempts.empty() && cur.attempts.back().index == index) Observe(cur, seen, now);
      return OkStatus();
    }));
  }
  Action action = Decide(r, now);
  switch (action.kind) {
    case ActionKind::kNothing:
    case ActionKind::kWait:
      return r;
    case ActionKind::kFinish:
      return store.Update(id, [&](ManagedRecord& cur) {
        if (cur.final_state) return OkStatus();
        cur.final_state = action.final_state;
        cur.msg = action.msg;
        cur.msg_transient = false;
        return OkStatus();
      });
    case ActionKind::kCancel: {
      // Copies: `r` is replaced below.
      const std::string handle = r.attempts.back().handle;
      const int index = r.attempts.back().index;
      if (!action.cause.empty()) {
        TORCHX_ASSIGN_OR_RETURN(r, store.Update(id, [&](ManagedRecord& cur) {
          AttemptRecord& mine = cur.attempts.MutBack();
          if (mine.index == index && mine.cause.empty()) {
            mine.cause = action.cause;
            mine.msg = fmt::format("not started within {} s (--start_timeout)", r.start_timeout.value_or(0));
          }
          return OkStatus();
        }));
      }
      TORCHX_RETURN_IF_ERROR(backend.Cancel(handle));
      return r;
    }
    case ActionKind::kSubmit:
      TORCHX_RETURN_IF_ERROR(Submit(store, id, backend, r, action, now));
      TORCHX_ASSIGN_OR_RETURN(auto after, store.Get(id));
      if (!after) return NotFoundError(fmt::format("managed job {} does not exist", id));
      return std::move(*after);
  }
  return r;
}

namespace {

// For this long after a submission, a turn that still has the attempt as submitted comes within
// kObserveSoon (at most 20 turns a second, for at most a second).
constexpr double kObserveSoonSeconds = 1.0;
constexpr std::chrono::milliseconds kObserveSoon{50};

// A managed job's turn of the driver loop: resume an attempt left `submitting` (one whose
// submission this driver, or a dead one, could not record; none is in flight between turns),
// observe the current attempt and act on the policy's decision; wait on a running attempt.
class ManagedTurns final : public composite::TurnsOver<ManagedStore, AttemptBackend> {
 public:
  using TurnsOver::TurnsOver;

  Result<composite::TurnResult> Turn() override {
    TORCHX_RETURN_IF_ERROR(ResumeSubmitting(store_, id_, backend_, composite::EpochNow()));
    TORCHX_ASSIGN_OR_RETURN(ManagedRecord r, managed::Turn(store_, id_, backend_, composite::EpochNow()));
    if (r.final_state) return composite::TurnResult::Ended();
    composite::TurnResult out;
    const AttemptRecord* last = r.attempts.empty() ? nullptr : &r.attempts.back();
    if (last && last->phase == ChildPhase::kSubmitted && !specs::IsTerminal(last->state)) out.wait_on = last->handle;
    out.sole_child = true;  // one attempt at a time
    // Not started yet under --start_timeout: the turn that cancels it comes on time.
    if (last && out.wait_on && r.start_timeout && last->submitted && !last->started) {
      double left = *last->submitted + *r.start_timeout - composite::EpochNow();
      out.turn_within = std::chrono::milliseconds(static_cast<std::int64_t>(std::max(0.0, left) * 1000) + 1);
    }
    // Just submitted and not observed since: the next turn looks soon. The child may already run
    // (a local app starts within milliseconds), and its scheduler wakes a waiter for the next
    // change, not for one that came before the wait: a recovered job showed its new attempt
    // SUBMITTED for the 10 s of the notified wait.
    double since_submitted = last && last->submitted ? composite::EpochNow() - *last->submitted : -1;
    // (A submission time ahead of the clock, a clock stepped back, counts as long ago.)
    if (last && out.wait_on && last->state == specs::AppState::kSubmitted && since_submitted >= 0 &&
        since_submitted < kObserveSoonSeconds) {
      out.turn_within = std::min(out.turn_within.value_or(kObserveSoon), kObserveSoon);
    }
    return out;
  }
};

}  // namespace

// Nothing to settle first: a claim left by a dead driver is resumed at the start of each turn.
Result<std::unique_ptr<composite::DriverTurns>> ManagedKind::StartTurns(Store& store, const std::string& id,
                                                                        Backend& backend, const Record&) {
  return std::unique_ptr<composite::DriverTurns>(std::make_unique<ManagedTurns>(store, id, backend));
}

int RunManagedDriver(plugins::PluginRegistry& registry, const std::string& state_dir, const std::string& id,
                     int ready_fd) {
  return composite::RunDriverOf<ManagedKind>(registry, state_dir, id, ready_fd);
}

}  // namespace torchx::managed
