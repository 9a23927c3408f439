// RunCommand against real tools (sh, printenv): no shell between argv and the tool, the
// caller's environment with overrides put over it, exit codes and missing tools as documented.
#include "core/subprocess.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "testing/status_matchers.h"

namespace torchx::internal {
namespace {

TEST(RunCommand, PassesTheEnvironmentWithOverridesOverIt) {
  setenv("TORCHX_TEST_KEPT", "kept", 1);
  setenv("TORCHX_TEST_PINNED", "user's value", 1);
  auto res =
      RunCommand({"sh", "-c", "printf '%s|%s|%s' \"$TORCHX_TEST_KEPT\" \"$TORCHX_TEST_PINNED\" \"$TORCHX_TEST_NEW\""},
                 "", std::chrono::seconds(10), {"TORCHX_TEST_PINNED=standard", "TORCHX_TEST_NEW=a=b"});
  unsetenv("TORCHX_TEST_KEPT");
  unsetenv("TORCHX_TEST_PINNED");
  ASSERT_THAT(res, IsOk());
  EXPECT_EQ(res->exit_code, 0);
  EXPECT_EQ(res->out, "kept|standard|a=b");
  // A name that only starts like an override's is not replaced.
  setenv("TORCHX_TEST_PINNED_LONGER", "x", 1);
  res = RunCommand({"printenv", "TORCHX_TEST_PINNED_LONGER"}, "", std::chrono::seconds(10), {"TORCHX_TEST_PINNED=y"});
  unsetenv("TORCHX_TEST_PINNED_LONGER");
  ASSERT_THAT(res, IsOk());
  EXPECT_EQ(res->out, "x\n");
}

TEST(RunCommand, ExitCodesAndMissingTools) {
  auto res = RunCommand({"sh", "-c", "echo oops >&2; exit 3"});
  ASSERT_THAT(res, IsOk());
  EXPECT_EQ(res->exit_code, 3);
  EXPECT_EQ(res->err, "oops\n");
  EXPECT_THAT(RunCommand({"torchx-no-such-tool"}),
              StatusIs(StatusCode::kNotFound, ::testing::HasSubstr("not installed")));
}

}  // namespace
}  // namespace torchx::internal
