#include "torchx/specs/app_handle.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace torchx::specs {
namespace {

using ::testing::HasSubstr;

TEST(AppHandle, MakeAndParseRoundTrip) {
  std::string h = MakeAppHandle("local_cwd", "torchx", "echo-abc");
  EXPECT_EQ(h, "local_cwd://torchx/echo-abc");
  EXPECT_THAT(ParseAppHandle(h), IsOkAndHolds(ParsedAppHandle{"local_cwd", "torchx", "echo-abc"}));
}

TEST(AppHandle, EmptySession) {
  EXPECT_THAT(ParseAppHandle("k8s:///foo"), IsOkAndHolds(ParsedAppHandle{"k8s", "", "foo"}));
}

TEST(AppHandle, SessionIsGreedyUpToLastSlash) {
  EXPECT_THAT(ParseAppHandle("slurm://a/b/123"), IsOkAndHolds(ParsedAppHandle{"slurm", "a/b", "123"}));
  EXPECT_THAT(ParseAppHandle("kubernetes://torchx/default:job-x"),
              IsOkAndHolds(ParsedAppHandle{"kubernetes", "torchx", "default:job-x"}));
}

TEST(AppHandle, TrailingSlashBacktracksLikeTheRegex) {
  EXPECT_THAT(ParseAppHandle("s://a/b/"), IsOkAndHolds(ParsedAppHandle{"s", "a", "b/"}));
}

TEST(AppHandle, Malformed) {
  for (const char* bad : {"", "local_cwd", "local_cwd://", "local_cwd://session", "://s/app", "local_cwd://s/",
                          "a:/s/app", "local\n://s/app"}) {
    EXPECT_THAT(ParseAppHandle(bad),
                StatusIs(StatusCode::kInvalidArgument,
                         HasSubstr("is not of the form: <scheduler_backend>://<session_name>/<app_id>")))
        << bad;
  }
}

}  // namespace
}  // namespace torchx::specs
