// The driver's watchdog (RunWatched): what a launcher waiting on its pipe hears, and which driver
// deaths it replaces.
#include "composite/driver_process.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/daemon.h"
#include "testing/temp_dir.h"

namespace torchx::composite {
namespace {

// A launcher's pipe: RunWatched reports on the write end, the test reads the other.
struct Launcher {
  Launcher() { EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0); }
  ~Launcher() { ::close(fds[0]); }
  int fds[2] = {-1, -1};
};

TEST(RunWatched, PassesOnTheDriversWordAndReplacesOnlyAKilledDriver) {
  torchx::testing::ScopedTempDir dir;
  const std::string tries = dir.path() + "/tries";
  auto wanted = [] { return true; };
  {  // up, then the composite ends
    Launcher launcher;
    DriverStart start("sweep", "s1", launcher.fds[1]);
    int code = RunWatched(
        start,
        [](DriverStart& mine) {
          mine.Ready();
          return 0;
        },
        wanted);
    EXPECT_EQ(code, 0);
    EXPECT_EQ(internal::AwaitReport(launcher.fds[0]), true);
  }
  {  // exits (an error, a crash) without saying it is up: "could not start", not replaced
    Launcher launcher;
    DriverStart start("sweep", "s2", launcher.fds[1]);
    int code = RunWatched(
        start,
        [&](DriverStart&) {
          std::ofstream(tries, std::ios::app) << "x\n";
          return 1;
        },
        wanted);
    EXPECT_EQ(code, 1);
    EXPECT_EQ(internal::AwaitReport(launcher.fds[0]), false);
    EXPECT_EQ(std::filesystem::file_size(tries), 2u);  // one try
  }
  std::filesystem::remove(tries);
  {  // killed before it said a word: replaced, and the launcher hears from the next one
    Launcher launcher;
    DriverStart start("sweep", "s3", launcher.fds[1]);
    int code = RunWatched(
        start,
        [&](DriverStart& mine) {
          std::ofstream(tries, std::ios::app) << "x\n";
          if (std::filesystem::file_size(tries) == 2) ::kill(::getpid(), SIGKILL);
          mine.Ready();
          return 0;
        },
        wanted);
    EXPECT_EQ(code, 0);
    EXPECT_EQ(internal::AwaitReport(launcher.fds[0]), true);
    EXPECT_EQ(std::filesystem::file_size(tries), 4u);  // two tries
  }
}

}  // namespace
}  // namespace torchx::composite
