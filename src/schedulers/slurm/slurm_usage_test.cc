// Slurm's resource figures: sstat rows and squeue step rows as the test cluster (22.05) prints
// them, joined to an app's replicas; and ResourceUsage against a fake of the tools.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "schedulers/slurm/fake_slurm.h"
#include "schedulers/slurm/slurm_scheduler.h"
#include "schedulers/slurm/slurm_usage.h"
#include "testing/fake_clock.h"
#include "testing/fake_command_runner.h"
#include "testing/status_matchers.h"

namespace torchx::schedulers::slurm {
namespace {

using ::testing::ElementsAre;
using testing::FakeCommandRunner;
using ::testing::HasSubstr;

TEST(SlurmUsage, SlurmDurationReadsEveryFormSlurmPrints) {
  struct Case {
    const char* text;
    std::optional<double> seconds;
  };
  for (const Case& c : std::initializer_list<Case>{{"00:00:05", 5},
                                                   {"01:02:03", 3723},
                                                   {"2-01:00:00", 2 * 86400 + 3600},
                                                   {"03:04", 184},
                                                   {"03:04.500", 184.5},
                                                   {"00:00:00", 0},
                                                   {"", std::nullopt},
                                                   {"5", std::nullopt},
                                                   {"a:b", std::nullopt},
                                                   {"1:2:3:4", std::nullopt},
                                                   {"-1:00", std::nullopt},
                                                   {"x-01:00:00", std::nullopt}}) {
    EXPECT_EQ(SlurmDuration(c.text), c.seconds) << c.text;
  }
}

// Two het components (435, 436) of one app, as `sstat -a -n --noconvert --parsable2` printed them.
constexpr const char* kSstatHet =
    "435.batch|cpu=00:00:00,energy=0,fs/disk=34670,mem=15675392,pages=0,vmem=564948992|node3\n"
    "435.0|cpu=00:00:03,energy=0,fs/disk=1694736,mem=69287936,pages=0,vmem=73895936|node3\n"
    "436.0|cpu=00:00:05,energy=0,fs/disk=1694736,mem=69431296,pages=0,vmem=73895936|node1\n";

TEST(SlurmUsage, ParseSstatReadsCpuTimeMemoryAndNodesOfEachStep) {
  auto steps = ParseSstat(kSstatHet);
  ASSERT_THAT(steps, IsOk());
  ASSERT_EQ(steps->size(), 3u);
  EXPECT_EQ((*steps)[0].job_id, "435");
  EXPECT_EQ((*steps)[0].step, "batch");
  EXPECT_EQ((*steps)[1].step, "0");
  EXPECT_EQ((*steps)[1].cpu_seconds, 3);
  EXPECT_EQ((*steps)[1].memory_bytes, 69287936);
  EXPECT_EQ((*steps)[2].job_id, "436");
  EXPECT_EQ((*steps)[2].nodes, "node1");
  EXPECT_FALSE((*steps)[2].gpu_utilization_percent.has_value());
  // Units where a version ignores --noconvert; GPU TRES where slurmd gathers them.
  auto units = ParseSstat("7.0|cpu=1-00:00:00,mem=2K,gres/gpumem=1G,gres/gpuutil=87|node1\n");
  ASSERT_THAT(units, IsOk());
  EXPECT_EQ((*units)[0].cpu_seconds, 86400);
  EXPECT_EQ((*units)[0].memory_bytes, 2048);
  EXPECT_EQ((*units)[0].gpu_memory_bytes, int64_t{1} << 30);
  EXPECT_EQ((*units)[0].gpu_utilization_percent, 87);
  EXPECT_THAT(ParseSstat("435.0|cpu=00:00:03\n"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("3 '|'")));
  EXPECT_THAT(ParseSstat("435|cpu=00:00:03|node1\n"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("step id")));
  auto empty = ParseSstat("");
  ASSERT_THAT(empty, IsOk());
  EXPECT_TRUE(empty->empty());
}

SlurmJob Component(const char* offset, const char* raw_id, const char* name, const char* host) {
  SlurmJob j;
  j.job_id = "435";
  j.component = offset;
  j.raw_id = raw_id;
  j.name = name;
  j.state = "RUNNING";
  j.hostname = host;
  return j;
}

std::vector<SlurmJob> HetApp() {
  // squeue's order is not the components'
  return {Component("1", "436", "trainer-1", "node1"), Component("0", "435", "trainer-0", "node3")};
}

TEST(SlurmUsage, EachReplicaGetsItsOwnStepsCpuAverageAndMemory) {
  auto steps = ParseSstat(kSstatHet);
  ASSERT_THAT(steps, IsOk());
  std::map<std::string, double, std::less<>> starts{{"435.0", 1000}, {"436.0", 1000}, {"435.batch", 990}};
  AppUsage u = UsageFromSteps(HetApp(), *steps, starts, 1010);
  ASSERT_EQ(u.replicas.size(), 2u);
  EXPECT_EQ(u.replicas[0].role, "trainer");
  EXPECT_EQ(u.replicas[0].replica_id, 0);
  EXPECT_EQ(u.replicas[0].host, "node3");
  ASSERT_EQ(u.replicas[0].samples.size(), 1u);
  const UsageSample& s0 = u.replicas[0].samples[0];
  EXPECT_EQ(s0.time, 1010);
  EXPECT_DOUBLE_EQ(*s0.cpu_percent, 30);  // 3 s of CPU in 10 s; the batch step is not counted
  EXPECT_EQ(s0.rss_bytes, 69287936);
  EXPECT_TRUE(s0.gpus.empty());
  EXPECT_EQ(u.replicas[1].replica_id, 1);
  EXPECT_DOUBLE_EQ(*u.replicas[1].samples[0].cpu_percent, 50);
}

TEST(SlurmUsage, AReplicaWithoutARunningStepHasNoSampleAndNoStartNoCpu) {
  std::vector<StepUsage> only_first = {{"435", "0", 4, 1000, std::nullopt, std::nullopt, "node3"},
                                       {"435", "1", 2, 500, 50, 1 << 20, "node3"}};
  AppUsage u = UsageFromSteps(HetApp(), only_first, {}, 1010);
  ASSERT_EQ(u.replicas.size(), 2u);
  ASSERT_EQ(u.replicas[0].samples.size(), 1u);
  EXPECT_FALSE(u.replicas[0].samples[0].cpu_percent.has_value());  // no start time: no average
  EXPECT_EQ(u.replicas[0].samples[0].rss_bytes, 1500);             // two srun steps summed
  ASSERT_EQ(u.replicas[0].samples[0].gpus.size(), 1u);
  EXPECT_EQ(u.replicas[0].samples[0].gpus[0].utilization_percent, 50);
  EXPECT_TRUE(u.replicas[1].samples.empty());
  // Within a second of the start there is no average either.
  AppUsage early = UsageFromSteps(HetApp(), only_first, {{"435.0", 1009.5}}, 1010);
  EXPECT_FALSE(early.replicas[0].samples[0].cpu_percent.has_value());
}

TEST(SlurmUsage, ParseStepStartsSkipsRowsWithoutATime) {
  auto starts = ParseStepStarts("435.0|2026-11-26T13:55:38|\n435.batch|N/A|\n");
  EXPECT_EQ(starts.size(), 1u);
  EXPECT_TRUE(starts.count("435.0"));
}

// CPU % is over the time since each step started (2020 in these rows): the clock reads 2027.
struct UsageFixture : FakeSlurm {
  UsageFixture() { clock->Advance(std::chrono::seconds(1'800'000'000)); }
};

TEST(SlurmScheduler, ResourceUsageReadsSstatForTheRunningComponents) {
  UsageFixture f;
  f.tools->On({"squeue", "--me"}, 0,
              QueueRows("435|435|0|RUNNING|node3|0|0|2026-11-26T13:55:38|trainer-0|\n"
                        "436|435|1|RUNNING|node1|0|0|2026-11-26T13:55:38|trainer-1|\n"
                        "500|N/A|N/A|RUNNING|node2|0|0|2026-11-26T13:55:38|other-0|\n"));
  f.tools->On({"sstat"}, 0, kSstatHet);
  f.tools->On({"squeue", "--steps"}, 0, "435.0|2020-01-01T00:00:00|\n436.0|2020-01-01T00:00:00|\n");
  auto u = f.sched->ResourceUsage("435", {});
  ASSERT_THAT(u, IsOk());
  ASSERT_TRUE(u->has_value());
  ASSERT_EQ((*u)->replicas.size(), 2u);
  EXPECT_EQ((*u)->replicas[1].host, "node1");
  ASSERT_EQ((*u)->replicas[1].samples.size(), 1u);
  EXPECT_EQ((*u)->replicas[1].samples[0].rss_bytes, 69431296);
  EXPECT_TRUE((*u)->replicas[1].samples[0].cpu_percent.has_value());
  EXPECT_THAT((*u)->note, HasSubstr("average since"));
  EXPECT_THAT((*u)->gpu_note, HasSubstr("no GPU figures"));
  EXPECT_THAT(f.tools->CallsOf("sstat"), ElementsAre(ElementsAre("sstat", "-a", "-n", "--noconvert", "--parsable2",
                                                                 "-o", std::string(kSstatFields), "-j", "435,436")));
}

TEST(SlurmScheduler, ResourceUsageOfAPendingEndedOrUnknownJobSaysWhy) {
  UsageFixture f;
  f.tools->On({"squeue", "--me"}, 0, QueueRows("435|435|0|PENDING|N/A|0|0|2026-11-26T13:55:38|trainer-0|\n"));
  auto pending = f.sched->ResourceUsage("435", {});
  ASSERT_THAT(pending, IsOk());
  ASSERT_TRUE(pending->has_value());
  EXPECT_THAT((*pending)->note, HasSubstr("no replica is running yet"));
  EXPECT_TRUE(f.tools->CallsOf("sstat").empty());

  // Ended, and still in the queue (within MinJobAge).
  f.NextRefresh();
  f.tools->On({"squeue", "--me"}, 0, QueueRows("435|435|0|FAILED|node3|0|256|2026-11-26T13:55:38|trainer-0|\n"));
  auto failed = f.sched->ResourceUsage("435", {});
  ASSERT_THAT(failed, IsOk());
  ASSERT_TRUE(failed->has_value());
  EXPECT_THAT((*failed)->note, HasSubstr("the job is FAILED"));
  EXPECT_TRUE(f.tools->CallsOf("sstat").empty());

  // Gone from the queue (past MinJobAge): accounting's.
  f.NextRefresh();
  f.tools->On({"squeue", "--me"}, 0, "");
  f.tools->On({"squeue", "-h"}, 1, "", "slurm_load_jobs error: Invalid job id specified\n");
  f.tools->On({"sacct"}, 0, "JobID|JobName|State|ExitCode|NodeList\n435|trainer-0|COMPLETED|0:0|node3\n");
  auto ended = f.sched->ResourceUsage("435", {});
  ASSERT_THAT(ended, IsOk());
  ASSERT_TRUE(ended->has_value());
  EXPECT_THAT((*ended)->note, HasSubstr("the job is SUCCEEDED"));
  ASSERT_EQ((*ended)->replicas.size(), 1u);
  EXPECT_TRUE((*ended)->replicas[0].samples.empty());

  f.tools->On({"sacct"}, 0, "JobID|JobName|State|ExitCode|NodeList\n");
  auto unknown = f.sched->ResourceUsage("999", {});
  ASSERT_THAT(unknown, IsOk());
  EXPECT_FALSE(unknown->has_value());
}

TEST(SlurmScheduler, ResourceUsageWithoutGatheredStepsSaysSstatsReason) {
  UsageFixture f;
  f.tools->On({"squeue", "--me"}, 0, QueueRows("435|N/A|N/A|RUNNING|node3|0|0|2026-11-26T13:55:38|trainer-0|\n"));
  f.tools->On({"sstat"}, 0, "", "sstat: error: No steps running for job 435\n");
  auto u = f.sched->ResourceUsage("435", {});
  ASSERT_THAT(u, IsOk());
  ASSERT_TRUE(u->has_value());
  EXPECT_THAT((*u)->note, HasSubstr("No steps running for job 435"));
  EXPECT_TRUE((*u)->replicas[0].samples.empty());
}

}  // namespace
}  // namespace torchx::schedulers::slurm
