// The queue snapshot's pure parts: when one answers (a table), its file form, its rows; and the
// file store's refusals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "schedulers/slurm/queue_snapshot.h"
#include "schedulers/slurm/snapshot_store.h"
#include "testing/golden.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace torchx::schedulers::slurm {
namespace {

using ::testing::HasSubstr;

TEST(QueueSnapshot, WhenASnapshotAnswers) {
  struct Case {
    const char* why;
    SnapshotAsk ask;
    bool serves;
  };
  // {taken_at, answered_at, now, interval, touched_at, answered_from}
  const Case cases[] = {
      {"none at hand", {std::nullopt, 0, 100, 2, std::nullopt, std::nullopt}, false},
      {"younger than the interval", {99, 0, 100, 2, std::nullopt, std::nullopt}, true},
      {"as old as the interval", {98, 0, 100, 2, std::nullopt, std::nullopt}, false},
      {"a longer interval keeps it", {95, 0, 100, 10, std::nullopt, std::nullopt}, true},
      {"a slow squeue's, aged from its answer", {95, 99, 100, 2, std::nullopt, std::nullopt}, true},
      {"a slow squeue's, answered an interval ago", {95, 98, 100, 2, std::nullopt, std::nullopt}, false},
      {"submitted or cancelled after it was taken", {99, 0, 100, 2, 99.5, std::nullopt}, false},
      {"submitted or cancelled while a slow squeue ran", {95, 99, 100, 2, 96, std::nullopt}, false},
      {"submitted or cancelled as it was taken", {99, 0, 100, 2, 99, std::nullopt}, false},
      {"taken just after a submit or cancel: kept briefly", {99.9, 0, 100, 2, 99, std::nullopt}, true},
      {"taken just after a submit or cancel: not for long", {99.5, 0, 100, 2, 99, std::nullopt}, false},
      {"taken well after a submit or cancel: the whole interval", {98.5, 0, 100, 2, 96, std::nullopt}, true},
      {"older than the last answer's", {99, 0, 100, 2, std::nullopt, 99.5}, false},
      {"the last answer's own", {99, 0, 100, 2, std::nullopt, 99}, true},
      {"from a clock that went back", {130, 0, 100, 2, std::nullopt, std::nullopt}, false},
      {"from a moment ahead (clocks of two processes)", {100.5, 0, 100, 2, std::nullopt, std::nullopt}, true},
  };
  for (const Case& c : cases) EXPECT_EQ(SnapshotServes(c.ask), c.serves) << c.why;
}

TEST(QueueSnapshot, ItsFileFormRoundTripsAndATornOneIsNone) {
  QueueSnapshot ok{1764459546.25, 1764459547.5, std::nullopt,
                   "2044|N/A|2044|N/A|N/A|RUNNING|node2|0|0|2026-11-29T23:35:14|a|\n"};
  auto back = SnapshotFromText(SnapshotToText(ok));
  ASSERT_TRUE(back.has_value());
  EXPECT_DOUBLE_EQ(back->taken_at, ok.taken_at);
  EXPECT_DOUBLE_EQ(back->answered_at, ok.answered_at);
  EXPECT_FALSE(back->error.has_value());
  EXPECT_EQ(back->rows, ok.rows);
  QueueSnapshot down{7, 8, "slurm_load_jobs error: Unable to contact\nslurm controller", ""};
  auto outage = SnapshotFromText(SnapshotToText(down));
  ASSERT_TRUE(outage.has_value());
  EXPECT_EQ(outage->error, "slurm_load_jobs error: Unable to contact slurm controller");
  for (const char* torn : {"", "torchx-squeue-snapshot 1 12.5 13 ok", "torchx-squeue-snapshot 1 x 13 ok\n",
                           "torchx-squeue-snapshot 1 12.5 ok\n", "torchx-squeue-snapshot 2 12.5 13 ok\n",
                           "torchx-squeue-snapshot 1 12.5 13 maybe\n"}) {
    EXPECT_FALSE(SnapshotFromText(torn).has_value()) << torn;
  }
}

TEST(QueueSnapshot, RowsNameArrayTasksByTheirArrayJob) {
  auto rows = ParseSnapshotRows(testing::Golden("slurm/squeue_snapshot_22_05.txt"));
  std::vector<std::string> ids;
  for (const SlurmJob& j : rows) ids.push_back(j.job_id + "/" + j.raw_id);
  EXPECT_THAT(ids, ::testing::Contains("2052_2/2052"));  // waiting: under the array job's id
  EXPECT_THAT(ids, ::testing::Contains("2052_0/2054"));  // running: its own job id
  EXPECT_THAT(ids, ::testing::Contains("2044/2044"));
  EXPECT_THAT(ids, ::testing::Contains("2050/2051"));  // a het component under its leader
  // A line that does not parse (a job name with a newline splits its row) is skipped, not fatal.
  auto odd = ParseSnapshotRows("2044|N/A\n2045|N/A|2045|N/A|N/A|RUNNING|node2|0|0|2026-11-29T23:35:14|a\nb|\n");
  ASSERT_EQ(odd.size(), 1u);
  EXPECT_EQ(odd[0].job_id, "2045");
  EXPECT_EQ(SubmittedId("2052_3"), "2052");
  EXPECT_EQ(SubmittedId("2050+1"), "2050");
  EXPECT_EQ(SubmittedId("2044"), "2044");
}

TEST(SnapshotStore, AFileStoreSharesWhatItWroteAndKeepsTheLatestTouch) {
  testing::ScopedTempDir dir;
  auto a = MakeFileSnapshotStore(dir.path(), "c");
  auto b = MakeFileSnapshotStore(dir.path(), "c");
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_FALSE((*b)->Read(SnapshotKind::kQueue).has_value());
  ASSERT_THAT((*a)->Write(SnapshotKind::kQueue, {5, 6, std::nullopt, "rows\n"}), IsOk());
  EXPECT_FALSE((*b)->Read(SnapshotKind::kAccounting).has_value());  // each kind its own
  auto seen = (*b)->Read(SnapshotKind::kQueue);
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->rows, "rows\n");
  (*a)->Touch("12", 3);
  (*a)->Touch("13", 4);
  (*a)->Touch("12", 6);
  EXPECT_EQ((*b)->TouchedAt("12"), 6);
  EXPECT_EQ((*b)->TouchedAt("13"), 4);
  EXPECT_EQ((*b)->TouchedAt("14"), std::nullopt);
  EXPECT_EQ((*b)->LastTouch(), 6);
  (*a)->Touch("14", 1000);  // touches from ten minutes before are dropped
  EXPECT_EQ((*b)->TouchedAt("13"), std::nullopt);
  EXPECT_EQ((*b)->TouchedAt("14"), 1000);
}

// A directory that is a link, someone else's, or writable by others is refused (the host's store
// then falls back to memory); a missing one is made 0700.
TEST(SnapshotStore, OnlyADirectoryOfTheUsersAloneIsUsed) {
  testing::ScopedTempDir dir;
  std::string made = dir.path() + "/made";
  ASSERT_THAT(MakeFileSnapshotStore(made, "c"), IsOk());
  struct stat st {};
  ASSERT_EQ(::stat(made.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  std::string open_to_all = dir.path() + "/open";
  ASSERT_EQ(::mkdir(open_to_all.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(open_to_all.c_str(), 0777), 0);
  EXPECT_THAT(MakeFileSnapshotStore(open_to_all, "c"),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("not a directory of this user's alone")));
  std::string link = dir.path() + "/link";
  ASSERT_EQ(::symlink(made.c_str(), link.c_str()), 0);
  EXPECT_THAT(MakeFileSnapshotStore(link, "c"), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("alone")));
  dir.Write("file", "x");
  EXPECT_THAT(MakeFileSnapshotStore(dir.path() + "/file", "c"),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("alone")));
  if (::getuid() == 0) {  // someone else's: only root can make one to try
    std::string theirs = dir.path() + "/theirs";
    ASSERT_EQ(::mkdir(theirs.c_str(), 0700), 0);
    ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
    EXPECT_THAT(MakeFileSnapshotStore(theirs, "c"), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("alone")));
  }
}

}  // namespace
}  // namespace torchx::schedulers::slurm
