// The supervisor's reading of a detached start's socket (detached_start.h).
#include "schedulers/local/detached_start.h"

#include <string>

#include <gtest/gtest.h>

namespace torchx::schedulers::local {
namespace {

TEST(ParseAdoptionTest, TheLineThenTheCommit) {
  auto a = ParseAdoption("2 101 0 5 6 102 2 7 8\ny");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->recorded);
  ASSERT_EQ(a->replicas.size(), 2u);
  EXPECT_EQ(a->replicas[0].pid, 101);
  EXPECT_EQ(a->replicas[0].exec_errno, 0);
  EXPECT_EQ(a->replicas[0].out_fd, 5);
  EXPECT_EQ(a->replicas[0].err_fd, 6);
  EXPECT_EQ(a->replicas[1].pid, 102);
  EXPECT_EQ(a->replicas[1].exec_errno, 2);
  EXPECT_EQ(a->replicas[1].err_fd, 8);
}

TEST(ParseAdoptionTest, WithoutTheCommitTheReplicasAreStillKnown) {
  // The caller failed to record the app, or died: the supervisor must find what to stop.
  for (const char* text : {"1 101 0 5 6\n", "1 101 0 5 6\nn", "1 101 0 5 6\nyy"}) {
    auto a = ParseAdoption(text);
    ASSERT_TRUE(a) << text;
    EXPECT_FALSE(a->recorded) << text;
    ASSERT_EQ(a->replicas.size(), 1u);
    EXPECT_EQ(a->replicas[0].pid, 101);
  }
}

TEST(ParseAdoptionTest, AMalformedLineIsRefused) {
  for (const char* text : {"", "y", "1 101 0 5 6", "0\ny", "2 101 0 5 6\ny", "1 101 0 5\ny", "1 101 0 5 6 7\ny",
                           "1 x 0 5 6\ny", "1 -4 0 5 6\ny", "1 101 0 -1 6\ny", "17 1 0 1 1\ny", "1  101 0 5 6\ny"}) {
    EXPECT_FALSE(ParseAdoption(text)) << text;
  }
}

}  // namespace
}  // namespace torchx::schedulers::local
