// The kernel's child operations over the smallest kind there is (a record of a name and children
// with nothing of their own): what every kind gets from child_ops.h and record_json.h without a
// line of its own.
#include "composite/child_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "composite/fake_children.h"
#include "composite/test_ring.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace torchx::composite {
namespace {

using specs::AppState;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

ChildPlan PlanOf(const std::string& id) {
  ChildPlan p;
  p.info.scheduler = "fake";
  p.info.app_id = id;
  p.planned = {"fake://s/" + id, true};
  return p;
}

class ChildOpsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_THAT(store_.Create(MakeRing(3)), IsOk()); }
  Ring Get() {
    auto r = store_.Get("ring-1");
    EXPECT_THAT(r, IsOk());
    return r && *r ? **r : Ring{};
  }
  static void Settle(Ring&) {}
  static bool Waiting(const Ring&, const ChildRecord& c) { return c.phase == ChildPhase::kWaiting; }

  testing::ScopedTempDir dir_;
  RingStore store_{dir_.path() + "/ring", "ring"};
  FakeChildren<ChildBackend> fake_{"s"};
};

TEST_F(ChildOpsTest, ClaimedChildrenAreSubmittedAndRecordedOnceAndAFailedPlanFailsOnlyItsChild) {
  std::map<size_t, Result<ChildPlan>> plans;
  plans.emplace(0, PlanOf("a"));
  plans.emplace(1, InternalError("no such image"));
  Ring claimed_in;
  auto claimed = ClaimChildren(store_, "ring-1", &Ring::links, std::move(plans), Waiting, Settle, claimed_in);
  ASSERT_THAT(claimed, IsOk());
  EXPECT_EQ(claimed->size(), 1u);
  EXPECT_EQ(claimed_in.links[0].phase, ChildPhase::kSubmitting);
  EXPECT_EQ(claimed_in.links[0].planned.handle, "fake://s/a");
  EXPECT_EQ(claimed_in.links[1].phase, ChildPhase::kDone);
  EXPECT_THAT(claimed_in.links[1].msg, HasSubstr("submission failed: no such image"));
  // What a second driver would see on disk between the claim and the submission.
  EXPECT_EQ(Get().links[0].phase, ChildPhase::kSubmitting);

  auto recorded = SubmitClaimed(store_, "ring-1", fake_, &Ring::links, *claimed, Settle);
  ASSERT_THAT(recorded, IsOk());
  EXPECT_EQ(recorded->links[0].phase, ChildPhase::kSubmitted);
  EXPECT_EQ(recorded->links[0].handle, "fake://s/a");
  EXPECT_TRUE(recorded->links[0].planned.handle.empty());  // the claim is cleared once recorded
  EXPECT_THAT(fake_.submitted, ElementsAre("a"));
  // Claimed again: nothing is waiting at position 0 any more.
  std::map<size_t, Result<ChildPlan>> again;
  again.emplace(0, PlanOf("a"));
  auto none = ClaimChildren(store_, "ring-1", &Ring::links, std::move(again), Waiting, Settle, claimed_in);
  ASSERT_THAT(none, IsOk());
  EXPECT_TRUE(none->empty());
}

TEST_F(ChildOpsTest, ACancelRecordedWhileSubmittingCancelsWhatWasSubmitted) {
  std::map<size_t, Result<ChildPlan>> plans;
  plans.emplace(2, PlanOf("c"));
  Ring claimed_in;
  auto claimed = ClaimChildren(store_, "ring-1", &Ring::links, std::move(plans), Waiting, Settle, claimed_in);
  ASSERT_THAT(claimed, IsOk());
  // A `torchx cancel` from another terminal lands between the claim and the record.
  ASSERT_THAT(CancelComposite(store_, "ring-1", fake_, &Ring::links, "the ring was cancelled", Settle), IsOk());
  auto recorded = SubmitClaimed(store_, "ring-1", fake_, &Ring::links, *claimed, Settle);
  ASSERT_THAT(recorded, IsOk());
  EXPECT_THAT(fake_.cancelled, ElementsAre("fake://s/c"));
  EXPECT_EQ(recorded->links[0].phase, ChildPhase::kSkipped);
  EXPECT_EQ(recorded->links[0].msg, "not run: the ring was cancelled");
  EXPECT_TRUE(recorded->cancel_requested);
}

TEST_F(ChildOpsTest, ADeadDriversClaimsAreAdoptedClaimedAgainOrFailed) {
  ASSERT_THAT(store_
                  .Update("ring-1",
                          [](Ring& r) {
                            for (size_t i = 0; i < r.links.size(); ++i) {
                              r.links.Mut(i).phase = ChildPhase::kSubmitting;
                              r.links.Mut(i).planned = {"fake://s/" + std::to_string(i), i != 2, 0};
                            }
                            r.links.Mut(2).planned.handle.clear();  // chosen only at submission
                            return OkStatus();
                          })
                  .status(),
              IsOk());
  fake_.states["fake://s/0"] = AppState::kRunning;  // it was submitted before the driver died
  auto why = [](const ChildRecord&) { return std::string("cannot tell"); };
  ASSERT_THAT(ResolveClaimsIn(store_, "ring-1", fake_, &Ring::links, why, Settle), IsOk());
  Ring r = Get();
  EXPECT_EQ(r.links[0].phase, ChildPhase::kSubmitted);
  EXPECT_EQ(r.links[0].handle, "fake://s/0");
  EXPECT_EQ(r.links[1].phase, ChildPhase::kWaiting);  // never submitted: it may be again
  EXPECT_EQ(r.links[2].phase, ChildPhase::kDone);     // may have been: failed, never twice
  EXPECT_EQ(r.links[2].msg, "cannot tell");
  EXPECT_TRUE(fake_.submitted.empty());
}

TEST_F(ChildOpsTest, AClaimFoundNeverSubmittedAfterACancelIsNotRunNotLeftWaiting) {
  // The driver died between claiming and submitting; `torchx cancel` came before a new driver.
  ASSERT_THAT(store_
                  .Update("ring-1",
                          [](Ring& r) {
                            r.links.Mut(0).phase = ChildPhase::kSubmitting;
                            r.links.Mut(0).planned = {"fake://s/0", true, 0};
                            return OkStatus();
                          })
                  .status(),
              IsOk());
  ASSERT_THAT(CancelComposite(store_, "ring-1", fake_, &Ring::links, "the ring was cancelled", Settle), IsOk());
  auto why = [](const ChildRecord&) { return std::string("cannot tell"); };
  ASSERT_THAT(ResolveClaimsIn(store_, "ring-1", fake_, &Ring::links, why, Settle), IsOk());
  Ring r = Get();
  EXPECT_EQ(r.links[0].phase, ChildPhase::kSkipped);  // nothing would ever submit it again
  EXPECT_EQ(r.links[0].msg, "not run: the ring was cancelled");
  EXPECT_TRUE(fake_.submitted.empty());
}

TEST_F(ChildOpsTest, TheRecordReadsBackAndNamesItsKindInErrors) {
  Ring r = Get();
  r.links.Mut(0).phase = ChildPhase::kSubmitting;
  r.links.Mut(0).planned = {"fake://s/x", true, 12.5};
  r.links.Mut(1).phase = ChildPhase::kRefused;
  r.final_state = AppState::kFailed;
  auto back = RingFromJson(RingToJson(r));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(RingToJson(*back), RingToJson(r));
  EXPECT_EQ(back->links[0].planned.claimed, 12.5);
  EXPECT_EQ(LiveStateOf(*back, back->links), AppState::kFailed);
  std::string bad = RingToJson(r);
  bad.replace(bad.find("\"refused\""), 9, "\"lost\"");
  EXPECT_THAT(RingFromJson(bad), StatusIs(StatusCode::kInvalidArgument, HasSubstr("ring record: phase")));
  EXPECT_THAT(RingFromJson("{\"id\": 3"), StatusIs(StatusCode::kInternal, HasSubstr("ring record")));
}

}  // namespace
}  // namespace torchx::composite
