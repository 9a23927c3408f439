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
    auto fate = ResolveClaim(c.planned, kNow, [&](const std::string& h) -> Result<bool> {
      ++asked;
      EXPECT_EQ(h, c.planned.handle);
      return c.there;
    });
    ASSERT_THAT(fate, IsOk());
    EXPECT_EQ(*fate, c.want) << c.planned.handle << " there=" << c.there;
    EXPECT_EQ(asked, c.planned.handle.empty() ? 0 : 1);
  }
  auto down = ResolveClaim({"slurm://s/1", true, 0}, kNow,
                           [](const std::string&) -> Result<bool> { return UnavailableError("squeue: timed out"); });
  EXPECT_THAT(down, StatusIs(StatusCode::kUnavailable, ::testing::HasSubstr("squeue")));
}

}  // namespace
}  // namespace torchx::composite
