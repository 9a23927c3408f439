#include "composite/driver_loop.h"

#include <algorithm>
#include <cstdio>

#include "composite/fault_points.h"

namespace torchx::composite {

int RunDriverLoop(DriverTurns& turns, const Clock& clock, const std::string& who, const DriverLoopOptions& options) {
  std::optional<std::chrono::steady_clock::time_point> failing_since;
  std::chrono::milliseconds backoff = options.backoff_first;
  bool notifies = false;  // what the last wait showed of the child's scheduler
  while (true) {
    auto turn = turns.Turn();
    if (!turn) {
      if (turn.error().code() == StatusCode::kNotFound) return 0;  // deleted
      std::fprintf(stderr, "%s: %s\n", who.c_str(), turn.error().message().c_str());
      auto now = clock.Now();
      if (!failing_since) failing_since = now;
      if (now - *failing_since >= options.error_budget) return 1;
      clock.SleepFor(backoff);
      backoff = std::min(backoff * 2, options.backoff_max);
      continue;
    }
    failing_since.reset();
    backoff = options.backoff_first;
    if (turn->ended) return 0;
    FaultPoint("turn_done");
    if (turn->wait_on) {
      std::chrono::milliseconds wait = notifies && turn->sole_child ? options.notified_wait : options.wait;
      if (turn->turn_within) wait = std::max(std::chrono::milliseconds(1), std::min(wait, *turn->turn_within));
      notifies = turn->running.size() > 1 ? turns.WaitForAnyUpdate(turn->running, wait)
                                          : turns.WaitForUpdate(*turn->wait_on, wait);
    } else {
      clock.SleepFor(turn->turn_within ? std::min(options.idle, *turn->turn_within) : options.idle);
    }
  }
}

}  // namespace torchx::composite
