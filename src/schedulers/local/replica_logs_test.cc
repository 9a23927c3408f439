// The local supervisor's log writer against a temporary directory: TorchX's three files,
// whole lines only in combined.log, and archived attempts.
#include "schedulers/local/replica_logs.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace torchx::schedulers::local {
namespace {

namespace fs = std::filesystem;
using Stream = ReplicaLogs::Stream;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream b;
  b << in.rdbuf();
  return b.str();
}

class ReplicaLogsTest : public ::testing::Test {
 protected:
  fs::path dir() const { return fs::path(tmp_.path()) / "app" / "r" / "0"; }
  ReplicaLogs Logs() const { return ReplicaLogs(dir().string(), (dir() / "error.json").string()); }

  testing::ScopedTempDir tmp_;
};

// A quiet replica costs no file (a create is as dear as a spawn on a slow disk); its first
// output, on either stream, creates all three, as TorchX's layout has them.
TEST_F(ReplicaLogsTest, TheFirstOutputCreatesTheThreeFilesAndAQuietReplicaHasNone) {
  ReplicaLogs logs = Logs();
  logs.StartAttempt(0);
  for (const char* name : {"stdout.log", "stderr.log", "combined.log"}) EXPECT_FALSE(fs::exists(dir() / name)) << name;
  logs.Append(Stream::kStderr, "warning\n");
  EXPECT_EQ(Read(dir() / "stdout.log"), "");
  EXPECT_EQ(Read(dir() / "stderr.log"), "warning\n");
  EXPECT_EQ(Read(dir() / "combined.log"), "warning\n");
}

TEST_F(ReplicaLogsTest, CombinedGetsWholeLinesOnly) {
  ReplicaLogs logs = Logs();
  logs.StartAttempt(0);
  logs.Create();
  logs.Append(Stream::kStdout, "out one\nout tw");
  logs.Append(Stream::kStderr, "err one\n");
  logs.Append(Stream::kStdout, "o\n");
  logs.Append(Stream::kStderr, "no newline");
  logs.EndStream(Stream::kStdout);
  logs.EndStream(Stream::kStderr);
  logs.CloseFiles();
  EXPECT_EQ(Read(dir() / "stdout.log"), "out one\nout two\n");
  EXPECT_EQ(Read(dir() / "stderr.log"), "err one\nno newline");
  EXPECT_EQ(Read(dir() / "combined.log"), "out one\nerr one\nout two\nno newline");
}

TEST_F(ReplicaLogsTest, ARetryArchivesThePreviousAttempt) {
  ReplicaLogs logs = Logs();
  logs.StartAttempt(0);
  logs.Create();
  logs.Append(Stream::kStdout, "first\n");
  logs.WriteStderrLine("r/0: cannot start `x` in /w: No such file or directory");
  std::ofstream(dir() / "error.json") << "{}";
  logs.CloseFiles();
  logs.StartAttempt(1);
  logs.Create();
  logs.Append(Stream::kStdout, "second\n");
  logs.CloseFiles();
  EXPECT_EQ(Read(dir() / "attempt_0" / "stdout.log"), "first\n");
  EXPECT_EQ(Read(dir() / "attempt_0" / "combined.log"),
            "first\nr/0: cannot start `x` in /w: No such file or directory\n");
  EXPECT_TRUE(fs::exists(dir() / "attempt_0" / "error.json"));
  EXPECT_FALSE(fs::exists(dir() / "error.json"));
  EXPECT_EQ(Read(dir() / "stdout.log"), "second\n");
  EXPECT_EQ(Read(dir() / "stderr.log"), "");
}

}  // namespace
}  // namespace torchx::schedulers::local
