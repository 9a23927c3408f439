#include "schedulers/slurm/slurm_hosts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace torchx::schedulers::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// `sinfo -N -h -O <kSinfoNodeFormat>` as Slurm 22.05 prints it: a row per node and partition.
constexpr const char* kSinfo =
    "node1|mixed|1/1/0/2|4000|1000|(null)|(null)|127.0.0.1|debug*|\n"
    "node1|mixed|1/1/0/2|4000|1000|(null)|(null)|127.0.0.1|batch|\n"
    "gpu01|allocated|64/0/0/64|512000|256000|gpu:a100:8(S:0-1)|gpu:a100:3(IDX:0-2)|10.0.0.7|gpu|\n"
    "node3|down*|0/0/2/2|4000|0|(null)|(null)|127.0.0.1|debug*|\n";

TEST(ParseSinfoNodes, OneHostPerNodeWithItsPartitions) {
  auto hosts_or = ParseSinfoNodes(kSinfo);
  ASSERT_THAT(hosts_or, IsOk());
  auto& hosts = *hosts_or;
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0].name, "node1");
  EXPECT_EQ(hosts[0].state, "mixed");
  EXPECT_THAT(hosts[0].groups, ElementsAre("debug", "batch"));
  EXPECT_EQ(hosts[0].cpus, 2);
  EXPECT_EQ(hosts[0].cpus_allocated, 1);
  EXPECT_EQ(hosts[0].memory_mb, 4000);
  EXPECT_EQ(hosts[0].memory_allocated_mb, 1000);
  EXPECT_EQ(hosts[0].gpus, 0);
  EXPECT_EQ(hosts[0].gpus_allocated, std::nullopt);
  EXPECT_EQ(hosts[1].gpus, 8);
  EXPECT_EQ(hosts[1].gpus_allocated, 3);
  EXPECT_EQ(hosts[1].address, "10.0.0.7");
  EXPECT_EQ(hosts[2].state, "down*");
}

TEST(ParseSinfoNodes, ARowItCannotReadIsNamed) {
  EXPECT_THAT(ParseSinfoNodes("node1|idle|2\n"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("row 1")));
  EXPECT_THAT(ParseSinfoNodes("node1|idle|x|4000|0|(null)|(null)|h|p|\n"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("CPUsState")));
  auto none_or = ParseSinfoNodes("");
  ASSERT_THAT(none_or, IsOk());
  auto& none = *none_or;
  EXPECT_TRUE(none.empty());
}

TEST(GpusInGres, EveryGpuTypeCountedAndIndexListsSkipped) {
  EXPECT_EQ(GpusInGres("(null)"), 0);
  EXPECT_EQ(GpusInGres("gpu:4"), 4);
  EXPECT_EQ(GpusInGres("gpu:a100:2(S:0-1),gpu:h100:1"), 3);
  EXPECT_EQ(GpusInGres("gpu:a100:2(IDX:0,2)"), 2);
  EXPECT_EQ(GpusInGres("mps:100,gpu:1"), 1);
  EXPECT_EQ(GpusInGres("gpumem:40960,gpu:2"), 2);
}

TEST(PlaceJobs, RunningComponentsOnTheirNodes) {
  auto hosts_or = ParseSinfoNodes(kSinfo);
  ASSERT_THAT(hosts_or, IsOk());
  auto& hosts = *hosts_or;
  std::vector<SlurmJob> jobs = {
      {"40", "0", "40", "trainer-0", "RUNNING", "node1", {}, 0, {}},
      {"40", "1", "41", "trainer-1", "RUNNING", "gpu01", {}, 0, {}},
      {"40", "2", "42", "ps-0", "RUNNING", "node1", {}, 0, {}},
      {"43", "", "43", "echo-0", "PENDING", "", {}, 0, {}},
      {"44", "", "44", "done-0", "COMPLETED", "node1", {}, 0, {}},
  };
  PlaceJobs(jobs, hosts);
  ASSERT_EQ(hosts[0].apps.size(), 1u);
  EXPECT_EQ(hosts[0].apps[0].app_id, "40");
  EXPECT_THAT(hosts[0].apps[0].where, ElementsAre("trainer/0", "ps/0"));
  ASSERT_EQ(hosts[1].apps.size(), 1u);
  EXPECT_THAT(hosts[1].apps[0].where, ElementsAre("trainer/1"));
  EXPECT_TRUE(hosts[2].apps.empty());
}

TEST(StacksCommand, IntoTheJobOnTheReplicasNode) {
  SlurmJob het{"40", "1", "41", "trainer-1", "RUNNING", "node2", {}, 0, {}};
  EXPECT_THAT(StacksCommand("/opt/bin/torchx-stacks", het),
              ElementsAre("srun", "--overlap", "--jobid=40", "--het-group=1", "--nodes=1", "--ntasks=1", "--quiet",
                          "/opt/bin/torchx-stacks", "--env", "SLURM_JOB_ID=40", "--env-same", "SLURMD_NODENAME",
                          "--env-differs", "SLURM_STEP_ID", "--env", "SLURM_PROCID=1"));
  SlurmJob task{"50_3", "", "53", "echo-0", "RUNNING", "node1", {}, 0, {}};
  auto argv = StacksCommand("torchx-stacks", task, {"--profile", "2"});
  EXPECT_EQ(argv[2], "--jobid=53");
  EXPECT_EQ(argv[3], "--nodes=1");
  EXPECT_EQ(argv[8], "SLURM_JOB_ID=53");
  EXPECT_EQ(argv.back(), "2");
}

}  // namespace
}  // namespace torchx::schedulers::slurm
