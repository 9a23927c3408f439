#include "core/python_bridge.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/cancel_scope.h"
#include "testing/status_matchers.h"

namespace torchx::internal {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A module that answers one request and then one that never returns, as a component file whose
// import waits forever does.
class PythonBridgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("torchx-bridge-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "bridge_probe.py") << "import os, subprocess, sys, threading, time\n"
                                               "out = os.fdopen(int(os.environ['TORCHX_BRIDGE_FD']), 'w')\n"
                                               "for line in sys.stdin:\n"
                                               "    if 'sleep' in line:\n"
                                               "        time.sleep(600)\n"
                                               "    if 'linger' in line:\n"
                                               "        threading.Thread(target=time.sleep, args=(600,)).start()\n"
                                               "        p = subprocess.Popen(['sleep', '600'])\n"
                                               "        open(os.environ['PROBE_PID_FILE'], 'w').write(str(p.pid))\n"
                                               "    out.write('{\"ok\": 1}\\n'); out.flush()\n";
    const char* old = std::getenv("PYTHONPATH");
    saved_ = old ? std::optional<std::string>(old) : std::nullopt;
    ::setenv("PYTHONPATH", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (saved_) {
      ::setenv("PYTHONPATH", saved_->c_str(), 1);
    } else {
      ::unsetenv("PYTHONPATH");
    }
    fs::remove_all(dir_);
  }
  fs::path dir_;
  std::optional<std::string> saved_;
};

TEST_F(PythonBridgeTest, ACallPastItsLimitStopsTheChildAndSaysSo) {
  PythonBridge bridge;
  ASSERT_THAT(bridge.Start("bridge_probe", "the probe"), IsOk());
  EXPECT_THAT(bridge.Call("{}", std::chrono::seconds(30)), IsOkAndHolds("{\"ok\": 1}\n"));
  auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(bridge.Call("{\"sleep\": 1}", std::chrono::milliseconds(500)),
              StatusIs(StatusCode::kDeadlineExceeded, HasSubstr("did not answer within")));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_FALSE(bridge.started());  // killed and reaped
  EXPECT_THAT(bridge.Call("{}"), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("not started")));
}

TEST_F(PythonBridgeTest, ACallWhoseCallerHasGoneStopsTheChild) {
  PythonBridge bridge;
  ASSERT_THAT(bridge.Start("bridge_probe", "the probe", /*bounded=*/true), IsOk());
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  CancelScope scope(cancelled);
  std::thread later([cancelled] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancelled->store(true);
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(bridge.Call("{\"sleep\": 1}"), StatusIs(StatusCode::kCancelled, HasSubstr("its caller has gone")));
  later.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_FALSE(bridge.started());  // killed and reaped
  // An unbounded bridge (the process's plugins) is the whole process's: no caller's scope stops it.
  PythonBridge shared;
  ASSERT_THAT(shared.Start("bridge_probe", "the probe"), IsOk());
  EXPECT_THAT(shared.Call("{}", std::chrono::seconds(30)), IsOkAndHolds("{\"ok\": 1}\n"));
}

// A bounded bridge's end does not wait on what its child started and will not end (a thread
// Python's exit waits for, a process): the child and its group are killed a few seconds on.
TEST_F(PythonBridgeTest, ABoundedBridgeEndsWithWhatItsChildStarted) {
  std::string pid_file = (dir_ / "probe.pid").string();
  ::setenv("PROBE_PID_FILE", pid_file.c_str(), 1);
  auto start = std::chrono::steady_clock::now();
  {
    PythonBridge bridge;
    ASSERT_THAT(bridge.Start("bridge_probe", "the probe", /*bounded=*/true), IsOk());
    EXPECT_THAT(bridge.Call("{\"linger\": 1}", std::chrono::seconds(30)), IsOkAndHolds("{\"ok\": 1}\n"));
  }
  ::unsetenv("PROBE_PID_FILE");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  std::ifstream in(pid_file);
  int grandchild = 0;
  in >> grandchild;
  ASSERT_GT(grandchild, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = ::kill(grandchild, 0) != 0;
    if (!gone) ::usleep(50'000);
  }
  EXPECT_TRUE(gone) << "the process the child started is still running";
}

TEST_F(PythonBridgeTest, WithoutALimitACallWaitsForItsAnswer) {
  PythonBridge bridge;
  ASSERT_THAT(bridge.Start("bridge_probe", "the probe"), IsOk());
  EXPECT_THAT(bridge.Call("{}"), IsOkAndHolds("{\"ok\": 1}\n"));
  EXPECT_THAT(bridge.Call("{}"), IsOkAndHolds("{\"ok\": 1}\n"));
}

}  // namespace
}  // namespace torchx::internal
