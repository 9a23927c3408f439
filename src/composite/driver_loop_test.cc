// The one driver loop on a fake clock: ends, deletion, waits on a running child, idles, and one
// error budget with one back-off for every kind.
#include "composite/driver_loop.h"

#include <deque>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/fake_clock.h"

namespace torchx::composite {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;

// Plays back scripted turns and records the waits the loop asks for.
class ScriptedTurns final : public DriverTurns {
 public:
  explicit ScriptedTurns(std::deque<Result<TurnResult>> script) : script_(std::move(script)) {}
  Result<TurnResult> Turn() override {
    ++turns;
    if (script_.empty()) return TurnResult::Ended();
    Result<TurnResult> next = std::move(script_.front());
    script_.pop_front();
    return next;
  }
  bool WaitForUpdate(const std::string& handle, milliseconds max_wait) override {
    waits.push_back(handle + " " + std::to_string(max_wait.count()));
    return handle.starts_with("local_cwd://");  // as local_cwd's inotify wait does
  }
  bool WaitForAnyUpdate(const std::vector<std::string>& handles, milliseconds max_wait) override {
    std::string all;
    for (const std::string& h : handles) all += (all.empty() ? "" : ",") + h;
    waits.push_back("any " + all + " " + std::to_string(max_wait.count()));
    return true;
  }
  int turns = 0;
  std::vector<std::string> waits;

 private:
  std::deque<Result<TurnResult>> script_;
};

TEST(DriverLoop, WaitsOnARunningChildIdlesWithoutOneAndEndsWithTheComposite) {
  testing::FakeClock clock;
  ScriptedTurns turns({TurnResult::WaitOn("local_cwd://s/a", true), TurnResult{},
                       TurnResult::WaitOn("local_cwd://s/b", true), TurnResult::WaitOn("local_cwd://s/c", false),
                       TurnResult::Ended()});
  EXPECT_EQ(RunDriverLoop(turns, clock, "driver"), 0);
  EXPECT_EQ(turns.turns, 5);
  // The first wait shows local_cwd notifies: the next one, on the only child running, is long;
  // with other children running (c), a change of theirs would wake nobody: short again.
  EXPECT_THAT(turns.waits, ElementsAre("local_cwd://s/a 1000", "local_cwd://s/b 10000", "local_cwd://s/c 1000"));
  EXPECT_THAT(clock.sleeps(), ElementsAre(milliseconds(200)));  // the idle turn, on the clock
}

TEST(DriverLoop, AChildWhoseSchedulerCannotNotifyIsPolledAndAKindsDeadlineCutsAWaitShort) {
  testing::FakeClock clock;
  TurnResult due = TurnResult::WaitOn("local_cwd://s/a", true);
  due.turn_within = milliseconds(2500);  // a start_timeout 2.5 s away
  TurnResult idle_due;
  idle_due.turn_within = milliseconds(50);
  ScriptedTurns turns({TurnResult::WaitOn("slurm://s/1", false), TurnResult::WaitOn("slurm://s/1", false),
                       TurnResult::WaitOn("local_cwd://s/a", false), due, idle_due, TurnResult::Ended()});
  EXPECT_EQ(RunDriverLoop(turns, clock, "driver"), 0);
  EXPECT_THAT(turns.waits,
              ElementsAre("slurm://s/1 1000", "slurm://s/1 1000", "local_cwd://s/a 1000", "local_cwd://s/a 2500"));
  EXPECT_THAT(clock.sleeps(), ElementsAre(milliseconds(50)));
}

// With several children running, the loop waits on all of them at once: whichever changes first
// wakes it (a sweep's freed slot is filled then, not at the next short wait).
TEST(DriverLoop, SeveralRunningChildrenAreWaitedOnTogether) {
  testing::FakeClock clock;
  TurnResult three = TurnResult::WaitOn("local_cwd://s/a", false);
  three.running = {"local_cwd://s/a", "local_cwd://s/b", "local_cwd://s/c"};
  TurnResult one = TurnResult::WaitOn("local_cwd://s/c", true);
  one.running = {"local_cwd://s/c"};
  ScriptedTurns turns({three, one, TurnResult::Ended()});
  EXPECT_EQ(RunDriverLoop(turns, clock, "driver"), 0);
  EXPECT_THAT(turns.waits,
              ElementsAre("any local_cwd://s/a,local_cwd://s/b,local_cwd://s/c 1000", "local_cwd://s/c 10000"));
}

TEST(DriverLoop, ADeletedRecordEndsTheDriverCleanly) {
  testing::FakeClock clock;
  ScriptedTurns turns({UnavailableError("store busy"), NotFoundError("sweep x does not exist")});
  EXPECT_EQ(RunDriverLoop(turns, clock, "driver"), 0);
  EXPECT_EQ(turns.turns, 2);
}

TEST(DriverLoop, FailedTurnsBackOffAndASuccessResetsTheBudget) {
  testing::FakeClock clock;
  std::deque<Result<TurnResult>> script;
  for (int i = 0; i < 5; ++i) script.emplace_back(UnavailableError("read-only file system"));
  script.emplace_back(TurnResult{});
  script.emplace_back(UnavailableError("read-only file system"));
  ScriptedTurns turns(std::move(script));
  EXPECT_EQ(RunDriverLoop(turns, clock, "driver"), 0);
  EXPECT_THAT(clock.sleeps(), ElementsAre(milliseconds(250), milliseconds(500), milliseconds(1000), milliseconds(2000),
                                          milliseconds(4000), milliseconds(200), milliseconds(250)));
}

TEST(DriverLoop, TurnsFailingForTheWholeBudgetEndTheDriverWithOne) {
  testing::FakeClock clock;
  std::deque<Result<TurnResult>> script;
  for (int i = 0; i < 1000; ++i) script.emplace_back(UnavailableError("no space left on device"));
  ScriptedTurns turns(std::move(script));
  DriverLoopOptions options;
  EXPECT_EQ(RunDriverLoop(turns, clock, "driver", options), 1);
  // 250 + 500 + ... + 4000 ms, then 5 s pauses until two minutes of failures: 29 turns.
  EXPECT_EQ(turns.turns, 29);
  milliseconds slept{0};
  for (milliseconds s : clock.sleeps()) slept += s;
  EXPECT_GE(slept, options.error_budget);
  EXPECT_LT(slept, options.error_budget + options.backoff_max);
}

}  // namespace
}  // namespace torchx::composite
