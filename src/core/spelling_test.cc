#include "core/spelling.h"

#include <gtest/gtest.h>

namespace torchx::internal {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("slurm", "slrum"), 2u);
}

TEST(SpellCheck, SuggestsCloseNameOnly) {
  std::vector<std::string> names = {"local_cwd", "local_docker", "slurm", "kubernetes"};
  EXPECT_EQ(SpellCheck("local_cdw", names), "local_cwd");
  EXPECT_EQ(SpellCheck("slurn", names), "slurm");
  EXPECT_EQ(SpellCheck("ray", names), std::nullopt);
}

TEST(SuggestionSuffix, FallsBackToTheFullList) {
  std::vector<std::string> names = {"a.b", "c.d"};
  EXPECT_EQ(SuggestionSuffix("zzzzzz", names), " Valid choices: a.b, c.d");
  EXPECT_EQ(SuggestionSuffix("a.c", names), " Did you mean `a.b`?");
}

// For messages that list the choices themselves: the suggestion or nothing, never the list again.
TEST(DidYouMeanSuffix, NeverRepeatsTheList) {
  std::vector<std::string> names = {"a.b", "c.d"};
  EXPECT_EQ(DidYouMeanSuffix("zzzzzz", names), "");
  EXPECT_EQ(DidYouMeanSuffix("a.c", names), " Did you mean `a.b`?");
}

}  // namespace
}  // namespace torchx::internal
