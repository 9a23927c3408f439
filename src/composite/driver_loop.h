// The one loop every composite's detached driver runs (pipelines, sweeps, managed jobs): a turn
// (the kind's: refresh the children, decide, act), then a wait: on a running child's scheduler
// when there is one, else a short idle on the clock. One error budget and one back-off for every
// kind, on the injected Clock, so tests drive it with a fake.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "torchx/clock.h"
#include "torchx/status.h"

namespace torchx::composite {

/// What a turn leaves: the composite ended (the driver exits), or a child to wait on (nullopt:
/// none runs, the driver idles).
struct TurnResult {
  bool ended = false;
  std::optional<std::string> wait_on;
  /// A deadline of the kind's own (a managed attempt's start_timeout): the next turn comes no
  /// later than this, whatever the child's scheduler says.
  std::optional<std::chrono::milliseconds> turn_within;
  /// `wait_on` is the only child that can change (a managed job's attempt, a sweep's one running
  /// trial): a wait on a scheduler that notifies may then be long. With others running, a change
  /// of theirs would wake nobody: the loop looks again within its short wait.
  bool sole_child = false;
  /// Every running child, `wait_on` first, where several run (a sweep's trials, a pipeline's
  /// parallel steps): a scheduler that can wait on several wakes the driver when any of them
  /// changes, so a free slot is filled at once, not at the next short wait.
  std::vector<std::string> running;

  /// The composite ended: the driver exits.
  static TurnResult Ended() {
    TurnResult r;
    r.ended = true;
    return r;
  }
  /// A wait on `child`, the only one running when `sole`.
  static TurnResult WaitOn(std::string child, bool sole) {
    TurnResult r;
    r.wait_on = std::move(child);
    r.sole_child = sole;
    return r;
  }
};

/// A kind's side of the loop.
class DriverTurns {
 public:
  virtual ~DriverTurns() = default;
  /// One turn. kNotFound: the record was deleted (the driver exits 0); any other error counts
  /// against the loop's error budget.
  virtual Result<TurnResult> Turn() = 0;
  /// Blocks until the child `handle` may have changed, at most `max_wait` (its scheduler's wait);
  /// returns whether the scheduler notifies changes (else it slept).
  virtual bool WaitForUpdate(const std::string& handle, std::chrono::milliseconds max_wait) = 0;
  /// The same for several children: woken by whichever changes first. Default: the first's wait.
  virtual bool WaitForAnyUpdate(const std::vector<std::string>& handles, std::chrono::milliseconds max_wait) {
    return !handles.empty() && WaitForUpdate(handles.front(), max_wait);
  }
};

/// What every kind's turns hold: its store, the composite's id and its children's backend (whose
/// scheduler wait is the loop's wait on a running child).
template <typename Store, typename Backend>
class TurnsOver : public DriverTurns {
 public:
  TurnsOver(Store& store, std::string id, Backend& backend) : store_(store), id_(std::move(id)), backend_(backend) {}
  bool WaitForUpdate(const std::string& handle, std::chrono::milliseconds max_wait) override {
    return backend_.WaitForUpdate(handle, max_wait);
  }
  bool WaitForAnyUpdate(const std::vector<std::string>& handles, std::chrono::milliseconds max_wait) override {
    return backend_.WaitForAnyUpdate(handles, max_wait);
  }

 protected:
  Store& store_;
  std::string id_;
  Backend& backend_;
};

struct DriverLoopOptions {
  /// No child runs: the next turn after this.
  std::chrono::milliseconds idle{200};
  /// A child runs: its scheduler is waited on for at most this...
  std::chrono::milliseconds wait{1000};
  /// ...or this, when that child is the only one that can change and its scheduler has shown it
  /// notifies a change (local_cwd's inotify): an idle driver then wakes for its child, not for a
  /// clock (100 idle managed jobs' drivers under 1% of a core). A change that does not touch the
  /// child (the record deleted) is seen this late.
  std::chrono::milliseconds notified_wait{10000};
  /// After a failed turn: the first pause, doubled per failure up to `backoff_max`.
  std::chrono::milliseconds backoff_first{250};
  std::chrono::milliseconds backoff_max{5000};
  /// Turns that have failed for this long in a row end the driver with exit 1 (the store is gone
  /// or read-only): the next call that reads the composite starts a driver again.
  std::chrono::milliseconds error_budget{120000};
};

/// Runs turns until the composite ends (0), its record is deleted (0) or turns have failed for
/// the error budget (1). Each failure is written to stderr as "<who>: <message>".
int RunDriverLoop(DriverTurns& turns, const Clock& clock, const std::string& who,
                  const DriverLoopOptions& options = {});

}  // namespace torchx::composite
