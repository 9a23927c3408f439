// The driver's journal lines: what a child's change reads as, the started line's counts, the time
// stamp, and that an unchanged (shared) child says nothing.
#include "composite/journal.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace torchx::composite {
namespace {

using specs::AppState;
using ::testing::ElementsAre;

ChildRecord Child(ChildPhase phase, AppState state, std::string handle = "", std::string msg = "") {
  ChildRecord c;
  c.phase = phase;
  c.state = state;
  c.handle = std::move(handle);
  c.msg = std::move(msg);
  return c;
}

TEST(JournalTest, AChildsChangeReadsAsWhatHappened) {
  ChildRecord waiting = Child(ChildPhase::kWaiting, AppState::kUnsubmitted);
  ChildRecord running = Child(ChildPhase::kSubmitted, AppState::kRunning, "local_cwd://s/x");
  ChildRecord failed = Child(ChildPhase::kDone, AppState::kFailed, "local_cwd://s/x", "exited with code 1");
  ChildRecord done = Child(ChildPhase::kDone, AppState::kSucceeded, "local_cwd://s/x", "ignored");
  ChildRecord skipped = Child(ChildPhase::kSkipped, AppState::kCancelled, "", "the sweep stopped");
  ChildRecord skipped_saying_so = Child(ChildPhase::kSkipped, AppState::kCancelled, "", "not run: a dependency failed");
  struct Case {
    const ChildRecord* before;
    const ChildRecord& now;
    std::string want;
  };
  std::vector<Case> cases = {
      {nullptr, waiting, ""},  // a child that waits says nothing
      {&waiting, waiting, ""},
      {&waiting, running, "trial 3: submitted as local_cwd://s/x; RUNNING"},
      {&running, failed, "trial 3: FAILED (exited with code 1)"},
      {&running, done, "trial 3: SUCCEEDED"},
      {&waiting, skipped, "trial 3: skipped (the sweep stopped)"},
      {&waiting, skipped_saying_so, "trial 3: skipped (not run: a dependency failed)"},
      {nullptr, running, "trial 3: submitted as local_cwd://s/x; RUNNING"},  // an attempt added
  };
  for (const Case& c : cases) EXPECT_EQ(ChildEventLine("trial 3", c.before, c.now), c.want) << c.want;
}

TEST(JournalTest, TheStartedLineCountsTheChildrenByWhereTheyAre) {
  ChildRecord a = Child(ChildPhase::kDone, AppState::kSucceeded);
  ChildRecord b = Child(ChildPhase::kSubmitted, AppState::kRunning);
  ChildRecord c = Child(ChildPhase::kWaiting, AppState::kUnsubmitted);
  EXPECT_EQ(DriverStartedLine(42, {&a, &b, &c, &c}),
            "driver started (pid 42): 4 children: 1 RUNNING, 1 SUCCEEDED, 2 waiting");
  EXPECT_EQ(DriverStartedLine(7, {}), "driver started (pid 7): 0 children");
}

TEST(JournalTest, LinesStartWithTheirUtcTime) {
  EXPECT_EQ(JournalLine(1764486000.25, "x"), "2025-11-30T07:00:00.250Z x");
}

TEST(JournalTest, OnlyChangedChildrenAreCompared) {
  ChildList<ChildRecord> before;
  before.push_back(Child(ChildPhase::kSubmitted, AppState::kRunning, "h0"));
  before.push_back(Child(ChildPhase::kSubmitted, AppState::kRunning, "h1"));
  ChildList<ChildRecord> now = before;  // shares both
  now.Mut(1).state = AppState::kSucceeded;
  now.Mut(1).phase = ChildPhase::kDone;
  now.push_back(Child(ChildPhase::kSubmitted, AppState::kPending, "h2"));
  auto label = [](const ChildRecord& c) { return c.handle; };
  EXPECT_THAT(ChildEvents(before, now, label), ElementsAre("h1: SUCCEEDED", "h2: submitted as h2; PENDING"));
  EXPECT_THAT(ChildEvents(now, now, label), ElementsAre());
}

}  // namespace
}  // namespace torchx::composite
