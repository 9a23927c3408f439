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
    if (script_.empty()) return TurnResult{true, std::nullopt, std::nullopt, false};
    Result<TurnResult> next = std::move(script_.front());
    script_.pop_front();
    return next;
  }
  bool WaitForUpdate(const std::string& handle, milliseconds max_wait) override {
    waits.push_back(handle + " " + std::to_string(max_wait.count()));
    return handle.starts_with("local_cwd://");  // as local_cwd's inotify wait does
  }
  int turns = 0;
  std::vector<std::string> waits;

 private:
  std::deque<Result<TurnResult>> script_;
};

TEST(DriverLoop, WaitsOnARunningChildIdlesWithoutOneAndEndsWithTheComposite) {
  testing::FakeClock clock;
  ScriptedTurns turns(
      {TurnResult{false, "local_cwd://s/a", std::nullopt, true}, TurnResult{false, std::nullopt, std::nullopt, false},
       TurnResult{false, "local_cwd://s/b", std::nullopt, true},
       TurnResult{false, "local_cwd://s/c", std::nullopt, false}, TurnResult{true, std::nullopt, std::nullopt, false}});
  EXPECT_EQ(RunDriverLoop(turns, clock, "driver"), 0);
  EXPECT_EQ(turns.turns, 5);
  // The first wait shows local_cwd notifies: the next one, on the only child running, is long;
  // with other children running (c), a change of theirs would wake nobody: short again.
  EXPECT_THAT(turns.waits, ElementsAre("local_cwd://s/a 1000", "local_cwd://s/b 10000", "local_cwd://s/c 1000"));
  EXPECT_THAT(clock.sleeps(), ElementsAre(milliseconds(200)));  // the idle turn, on the clock
}

TEST(DriverLoop, AChildWhoseSchedulerCannotNotifyIsPolledAndAKindsDeadlineCutsAWaitShort) {
  testing::FakeClock clock;
  TurnResult due{false, "local_cwd://s/a", std::nullopt, true};
  due.turn_within = milliseconds(2500);  // a start_timeout 2.5 s away
  TurnResult idle_due{false, std::nullopt, std::nullopt, false};
  idle_due.turn_within = milliseconds(50);
  ScriptedTurns turns({TurnResult{false, "slurm://s/1", std::nullopt, false},
                       TurnResult{false, "slurm://s/1", std::nullopt, false},
                       TurnResult{false, "local_cwd://s/a", std::nullopt, false}, due, idle_due,
                       TurnResult{true, std::nullopt, std::nullopt, false}});
  EXPECT_EQ(RunDriverLoop(turns, clock, "driver"), 0);
  EXPECT_THAT(turns.waits,
              ElementsAre("slurm://s/1 1000", "slurm://s/1 1000", "local_cwd://s/a 1000", "local_cwd://s/a 2500"));
  EXPECT_THAT(clock.sleeps(), ElementsAre(milliseconds(50)));
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
  script.emplace_back(TurnResult{false, std::nullopt, std::nullopt, false});
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
