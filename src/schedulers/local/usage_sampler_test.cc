#include "schedulers/local/usage_sampler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace torchx::schedulers::local {
namespace {

using ::testing::DoubleNear;
using ::testing::Optional;

TEST(ParseProcStat, ReadsTheFieldsAfterTheCommandName) {
  struct Case {
    const char* text;
    std::optional<ProcStat> want;
  };
  const Case cases[] = {
      {"1234 (python3) S 1000 1234 1234 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 3 0 98765 1000000 2048 "
       "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
       ProcStat{1234, 1000, 1234, 300, 98765, 2048, 'S'}},
      // The command name may hold spaces and parentheses: the fields start after the last ')'.
      {"77 (a (b) c) R 1 70 70 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 500 0 10", ProcStat{77, 1, 70, 10, 500, 10}},
      {"77 (short) R 1 70", std::nullopt},
      {"77 (cmd) RR 1 70 70 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 500 0 10", std::nullopt},
      {"x (cmd) R 1 70 70 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 500 0 10", std::nullopt},
      {"77 (cmd) R 1 70 70 0 -1 0 0 0 0 0 seven 3 0 0 20 0 1 0 500 0 10", std::nullopt},
      {"", std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto got = ParseProcStat(c.text);
    ASSERT_EQ(got.has_value(), c.want.has_value());
    if (!got) continue;
    EXPECT_EQ(got->pid, c.want->pid);
    EXPECT_EQ(got->ppid, c.want->ppid);
    EXPECT_EQ(got->pgrp, c.want->pgrp);
    EXPECT_EQ(got->cpu_ticks, c.want->cpu_ticks);
    EXPECT_EQ(got->start_ticks, c.want->start_ticks);
    EXPECT_EQ(got->rss_pages, c.want->rss_pages);
    EXPECT_EQ(got->state, c.want->state);
  }
}

class FakeProcs : public ProcSource {
 public:
  std::vector<ProcStat> procs;
  double uptime = 0;
  std::vector<ProcStat> Processes() override { return procs; }
  double UptimeSeconds() override { return uptime; }
  long TicksPerSecond() override { return 100; }
  long PageSize() override { return 4096; }
};

class FakeGpus : public devices::GpuMetrics {
 public:
  std::vector<devices::GpuDeviceSample> devices;
  Result<std::vector<devices::GpuDeviceSample>> Sample() override { return devices; }
};

TEST(UsageSampler, SumsEachReplicasTreeAndItsProcessGroup) {
  FakeProcs procs;
  procs.uptime = 110;  // every process started at 100 s (start ticks 10000): 10 s of life
  procs.procs = {
      {10, 1, 10, 500, 10000, 100},      // replica 0's leader: 5 s of CPU
      {11, 10, 11, 1000, 10000, 200},    // its child in a session of its own (torchrun's workers)
      {12, 11, 12, 100, 10000, 50},      // a grandchild
      {13, 1, 10, 100, 10000, 25},       // reparented away, still in the leader's group
      {14, 10, 14, 700, 10000, 0, 'Z'},  // exited, not reaped: not counted
      {20, 1, 20, 200, 10000, 400},      // replica 1
      {30, 1, 30, 9999, 10000, 9999},    // not ours
  };
  UsageSampler sampler(procs, nullptr);
  auto got = sampler.Sample({10, 20, 0}, 1700000000);
  ASSERT_EQ(got.replicas.size(), 3u);
  // (500 + 1000 + 100 + 100) ticks / 100 Hz over 10 s = 170%.
  EXPECT_THAT(got.replicas[0].cpu_percent, Optional(DoubleNear(170, 1e-9)));
  EXPECT_EQ(got.replicas[0].rss_bytes, (100 + 200 + 50 + 25) * 4096);
  EXPECT_EQ(got.replicas[0].processes, 4);
  EXPECT_THAT(got.replicas[1].cpu_percent, Optional(DoubleNear(20, 1e-9)));
  EXPECT_FALSE(got.replicas[2].cpu_percent.has_value());  // not running: no figures
  EXPECT_FALSE(got.replicas[2].processes.has_value());
  EXPECT_EQ(got.replicas[0].time, 1700000000);
  EXPECT_FALSE(got.host.has_value());  // no GPU driver

  // Five seconds later: the rate since the previous sample, not since the start; a pid reused by
  // a new process counts from its own start.
  procs.uptime = 115;
  procs.procs = {
      {10, 1, 10, 1000, 10000, 100},  // +500 ticks in 5 s = 100%
      {20, 1, 20, 250, 11400, 400},   // a new process (started at 114 s) with 250 ticks: 250% over 1 s
  };
  got = sampler.Sample({10, 20, 0}, 1700000005);
  EXPECT_THAT(got.replicas[0].cpu_percent, Optional(DoubleNear(100, 1e-9)));
  EXPECT_EQ(got.replicas[0].processes, 1);
  EXPECT_THAT(got.replicas[1].cpu_percent, Optional(DoubleNear(250, 1e-9)));
}

TEST(UsageSampler, GpuFiguresGoToTheReplicaWhoseProcessesHoldTheDevice) {
  FakeProcs procs;
  procs.uptime = 100;
  procs.procs = {{10, 1, 10, 0, 0, 1}, {11, 10, 10, 0, 0, 1}, {20, 1, 20, 0, 0, 1}};
  FakeGpus gpus;
  const int64_t gib = int64_t{1} << 30;
  gpus.devices = {
      {0, "GPU-A", 90.0, 30 * gib, 80 * gib, {{11, 2 * gib, 60.0}, {99, gib, 30.0}}},  // per-process SM share
      {1, "GPU-B", 75.0, 10 * gib, 80 * gib, {{10, 4 * gib, std::nullopt}, {11, gib, std::nullopt}}},
      {2, "GPU-C", 0.0, 0, 80 * gib, {}},
  };
  UsageSampler sampler(procs, &gpus);
  auto got = sampler.Sample({10, 20}, 5);
  const auto& r0 = got.replicas[0].gpus;
  ASSERT_EQ(r0.size(), 2u);
  EXPECT_EQ(r0[0].index, 0);
  EXPECT_EQ(r0[0].name, "GPU-A");
  EXPECT_EQ(r0[0].memory_used_bytes, 2 * gib);  // its own process, not pid 99's
  EXPECT_THAT(r0[0].utilization_percent, Optional(60.0));
  EXPECT_EQ(r0[0].memory_total_bytes, 80 * gib);
  EXPECT_EQ(r0[1].memory_used_bytes, 5 * gib);             // both of its processes
  EXPECT_THAT(r0[1].utilization_percent, Optional(75.0));  // no per-process share: the device's
  EXPECT_TRUE(got.replicas[1].gpus.empty());
  ASSERT_TRUE(got.host.has_value());
  ASSERT_EQ(got.host->gpus.size(), 3u);
  EXPECT_EQ(got.host->gpus[0].memory_used_bytes, 30 * gib);
  EXPECT_THAT(got.host->gpus[2].utilization_percent, Optional(0.0));
}

}  // namespace
}  // namespace torchx::schedulers::local
