// The claimed-but-unrecorded rule, as a table.
#include "composite/claims.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace torchx::composite {
namespace {

TEST(ResolveClaim, EachFate) {
  struct Case {
    PlannedChild planned;
    bool there;
    ClaimFate want;
  };
  constexpr double kNow = 1000;
  const double old = kNow - kClaimSettleSeconds, fresh = kNow - 1;
  for (const Case& c : std::vector<Case>{
           {{"local_cwd://s/a-1", true, fresh}, true, ClaimFate::kAdopt},
           {{"local_cwd://s/a-1", true, old}, false, ClaimFate::kNotSubmitted},
           // Not there yet, and the dead driver's start may still be recorded: asked again later.
           {{"local_cwd://s/a-1", true, fresh}, false, ClaimFate::kWait},
           {{"plugin://s/maybe", false, fresh}, true, ClaimFate::kAdopt},  // there: adopted, whatever the id's promise
           {{"plugin://s/maybe", false, old}, false, ClaimFate::kUnknowable},
           {{"", false, old}, false, ClaimFate::kUnknowable},  // the scheduler picks ids at submission
       }) {
    int asked = 0;
    ClaimLookup lookup;
    lookup.exists = [&](const std::string& h) -> Result<bool> {
      ++asked;
      EXPECT_EQ(h, c.planned.handle);
      return c.there;
    };
    PlannedChild planned = c.planned;
    auto fate = ResolveClaim(planned, kNow, lookup);
    ASSERT_THAT(fate, IsOk());
    EXPECT_EQ(*fate, c.want) << c.planned.handle << " there=" << c.there;
    EXPECT_EQ(asked, c.planned.handle.empty() ? 0 : 1);
  }
  PlannedChild one{"slurm://s/1", true, 0};
  ClaimLookup down;
  down.exists = [](const std::string&) -> Result<bool> { return UnavailableError("squeue: timed out"); };
  EXPECT_THAT(ResolveClaim(one, kNow, down), StatusIs(StatusCode::kUnavailable, ::testing::HasSubstr("squeue")));
}

// Where the scheduler picks the id at submission (Slurm), the claim's key finds the job: found,
// it is adopted under the handle found; not found, it was never submitted only once no submission
// can be in flight and while a submitted job would still be listed; else nothing can be known.
TEST(ResolveClaim, ByKey) {
  constexpr double kNow = 10000;
  struct Case {
    double age;
    std::optional<std::string> found;
    double findable;
    ClaimFate want;
  };
  for (const Case& c : std::vector<Case>{
           {1, "slurm://s/42", 300, ClaimFate::kAdopt},
           {1, std::nullopt, 300, ClaimFate::kWait},  // an sbatch may still be on its way
           {kKeySettleSeconds + 1, std::nullopt, 300, ClaimFate::kNotSubmitted},
           {301, std::nullopt, 300, ClaimFate::kUnknowable},  // it may have ended and been forgotten
           {kKeySettleSeconds + 1, std::nullopt, 0, ClaimFate::kUnknowable},
       }) {
    PlannedChild planned{"", false, kNow - c.age, "k1", "slurm"};
    ClaimLookup lookup;
    lookup.exists = [](const std::string&) -> Result<bool> { return InternalError("no handle to ask about"); };
    lookup.find = [&](const std::string& scheduler, const std::string& key) -> Result<std::optional<std::string>> {
      EXPECT_EQ(scheduler, "slurm");
      EXPECT_EQ(key, "k1");
      return c.found;
    };
    lookup.findable_for = [&](const std::string&) -> Result<double> { return c.findable; };
    auto fate = ResolveClaim(planned, kNow, lookup);
    ASSERT_THAT(fate, IsOk());
    EXPECT_EQ(*fate, c.want) << "age " << c.age;
    EXPECT_EQ(planned.handle, c.found.value_or(""));
  }
  // A scheduler that cannot look keys up: nothing can be known.
  PlannedChild planned{"", false, 0, "k1", "plugin"};
  ClaimLookup none;
  none.find = [](const std::string&, const std::string&) -> Result<std::optional<std::string>> {
    return UnimplementedError("no");
  };
  EXPECT_THAT(ResolveClaim(planned, kNow, none), IsOkAndHolds(ClaimFate::kUnknowable));
}

TEST(PlanClaim, AKeyOnlyWhereTheIdIsChosenAtSubmission) {
  schedulers::DryRunInfo local;
  local.scheduler = "local_cwd";
  local.app_id = "a-1";
  local.app_id_is_final = true;
  PlannedChild p = PlanClaim(local, "s");
  EXPECT_EQ(p.handle, "local_cwd://s/a-1");
  EXPECT_TRUE(p.key.empty() && local.submission_key.empty());
  schedulers::DryRunInfo slurm;
  slurm.scheduler = "slurm";
  PlannedChild q = PlanClaim(slurm, "s");
  EXPECT_TRUE(q.handle.empty());
  EXPECT_EQ(q.key.size(), 16u);
  EXPECT_EQ(slurm.submission_key, q.key);
  EXPECT_EQ(q.scheduler, "slurm");
  EXPECT_NE(PlanClaim(slurm, "s").key, q.key);
}

}  // namespace
}  // namespace torchx::composite
