// RunCommand against real tools (sh, printenv): no shell between argv and the tool, the
// caller's environment with overrides put over it, exit codes and missing tools as documented,
// and a tool that does not outlive its caller.
#include "core/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/cancel_scope.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

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

TEST(RunCommand, RunsInTheDirectoryGivenAndSaysWhyAToolCannotRun) {
  testing::ScopedTempDir dir;
  auto res = RunCommand({"pwd"}, dir.path());
  ASSERT_THAT(res, IsOk());
  EXPECT_EQ(std::filesystem::canonical(res->out.substr(0, res->out.size() - 1)),
            std::filesystem::canonical(dir.path()));
  std::string not_executable = dir.Write("tool", "echo hi\n");
  EXPECT_THAT(RunCommand({not_executable}), StatusIs(StatusCode::kInternal, ::testing::HasSubstr("cannot run")));
}

// A caller killed while its tool runs (a composite's driver in the middle of `sbatch`) takes the
// tool with it: nothing it started goes on submitting without it.
TEST(RunCommand, TheToolDiesWithItsCaller) {
  testing::ScopedTempDir dir;
  std::string pidfile = dir.path() + "/tool.pid";
  pid_t caller = ::fork();
  if (caller == 0) {
    (void)RunCommand(
        {"sh", "-c", "echo $$ > " + pidfile + ".tmp && mv " + pidfile + ".tmp " + pidfile + " && exec sleep 60"});
    ::_exit(0);
  }
  pid_t tool = 0;
  for (int i = 0; i < 500 && tool == 0; ++i) {
    std::ifstream f(pidfile);
    if (!(f >> tool)) tool = 0;
    if (tool == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(tool, 0);
  ::kill(caller, SIGKILL);
  ::waitpid(caller, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 300 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(tool) + "/stat");
    std::string line;
    std::getline(stat, line);
    // Gone, or dead and not yet reaped by whoever adopted it.
    gone = line.empty() || line.find(") Z ") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "the tool (pid " << tool << ") outlived its caller";
  if (!gone) ::kill(tool, SIGKILL);
}

TEST(RunCommand, ACancelledScopeStopsTheToolAndSaysSo) {
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  CancelScope scope(cancelled);
  std::thread later([cancelled] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancelled->store(true);
  });
  auto start = std::chrono::steady_clock::now();
  auto res = RunCommand({"sleep", "30"}, "", std::chrono::seconds(60));
  later.join();
  EXPECT_EQ(res.status().code(), StatusCode::kCancelled) << res.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // Scopes nest: an inner one that is not cancelled is still under the cancelled outer one.
  {
    CancelScope inner(std::make_shared<std::atomic<bool>>(false));
    EXPECT_TRUE(CancelScope::Cancelled());
  }
}

TEST(RunCommand, NoScopeOrAnUncancelledOneRunsToTheEnd) {
  EXPECT_FALSE(CancelScope::Cancelled());
  CancelScope scope(std::make_shared<std::atomic<bool>>(false));
  auto res = RunCommand({"sh", "-c", "sleep 0.3; echo done"}, "", std::chrono::seconds(10));
  ASSERT_THAT(res, IsOk());
  EXPECT_EQ(res->out, "done\n");
}

}  // namespace
}  // namespace torchx::internal
