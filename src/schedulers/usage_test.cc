#include "torchx/schedulers/usage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace torchx::schedulers {
namespace {

using ::testing::HasSubstr;
using ::torchx::StatusIs;

TEST(UsageJson, RoundTripKeepsEveryFigureAndEveryGap) {
  AppUsage u;
  u.interval_seconds = 5;
  u.gpu_note = "";
  u.note = "n";
  UsageSample s;
  s.time = 1700000000.5;
  s.cpu_percent = 187.5;
  s.rss_bytes = int64_t{3} << 32;
  s.processes = 3;
  s.gpus.push_back({1, "NVIDIA H100", 42.0, int64_t{1} << 30, int64_t{80} << 30});
  s.gpus.push_back({2, "NVIDIA H100", std::nullopt, std::nullopt, std::nullopt});
  u.replicas.push_back({"trainer", 1, "node-a", {s, UsageSample{1700000005, {}, {}, {}, {}}}});
  u.hosts.push_back({"node-a", {s}});
  auto back = UsageFromJson(UsageToJson(u));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(UsageToJson(*back), UsageToJson(u));
  const UsageSample& r = back->replicas[0].samples[0];
  EXPECT_EQ(back->replicas[0].role, "trainer");
  EXPECT_EQ(back->replicas[0].replica_id, 1);
  EXPECT_EQ(*r.rss_bytes, int64_t{3} << 32);
  EXPECT_EQ(r.gpus[0].index, 1);
  EXPECT_FALSE(r.gpus[1].utilization_percent.has_value());
  EXPECT_FALSE(back->replicas[0].samples[1].cpu_percent.has_value());
}

TEST(UsageJson, WrongTypesNameTheField) {
  EXPECT_THAT(UsageFromJson("[]"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("not a JSON object")));
  EXPECT_THAT(UsageFromJson(R"({"replicas": [{"role": 3}]})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("`replicas[0].role` must be a string")));
  EXPECT_THAT(UsageFromJson(R"({"replicas": [{"samples": [{"gpus": [{"utilization_percent": "x"}]}]}]})"),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("`replicas[0].samples[0].gpus[0].utilization_percent` must be a number")));
  EXPECT_THAT(SampleFromJson(R"({"cpu_percent": "hot"})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("`sample.cpu_percent` must be a number")));
}

TEST(FormatUsage, NewestSamplePerReplicaAGpuRowEachAndWhyFiguresAreMissing) {
  const int64_t gib = int64_t{1} << 30;
  AppUsage u;
  u.interval_seconds = 5;
  UsageSample old{100, 10.0, 1024, 1, {}};
  UsageSample s{105, 187.25, 412 * (int64_t{1} << 20), 3, {}};
  s.gpus.push_back({0, "H100", 87.0, 2 * gib, 80 * gib});
  s.gpus.push_back({1, "H100", std::nullopt, gib, 80 * gib});
  u.replicas.push_back({"trainer", 0, "node-a", {old, s}});
  u.replicas.push_back({"trainer", 1, "node-a", {}});
  UsageSample host{105, {}, {}, {}, {{0, "H100", 90.0, 3 * gib, 80 * gib}}};
  u.hosts.push_back({"node-a", {host}});
  u.note = "replica 1 has not started";
  std::string text = FormatUsage(u, 107);
  EXPECT_EQ(text,
            "Resources (sampled every 5s; newest sample 2s ago):\n"
            "  REPLICA    HOST    CPU%   RSS       PROCS  AVG CPU%  PEAK RSS  GPU  GPU%  GPU MEM\n"
            "  trainer/0  node-a  187.2  412.0MiB  3      98.6      412.0MiB  0    87.0  2.0GiB/80.0GiB\n"
            "                                                                 1    -     1.0GiB/80.0GiB\n"
            "  trainer/1  node-a  -      -         -      -         -         -    -     -\n"
            "GPUs on node-a:\n"
            "  GPU  NAME  UTIL%  MEMORY\n"
            "  0    H100  90.0   3.0GiB/80.0GiB\n"
            "Note: replica 1 has not started\n");
  u.hosts.clear();
  u.gpu_note = "no NVIDIA driver on this host (libnvidia-ml.so.1 not found)";
  text = FormatUsage(u, 107, 4);
  EXPECT_THAT(text, HasSubstr("CPU HISTORY"));
  EXPECT_THAT(text, HasSubstr("\u2581\u2588"));  // 10% then 187% of a 187% peak
  EXPECT_THAT(text, HasSubstr("GPUs: no NVIDIA driver on this host (libnvidia-ml.so.1 not found)\n"));
}

// Several sampled replicas (a job's, a sweep's running trials'): their newest figures summed.
TEST(FormatUsage, SeveralReplicasGetATotalRow) {
  AppUsage u;
  u.replicas.push_back({"trial 0/echo", 0, "h", {{100, 50.0, int64_t{100} << 20, 2, {}}}});
  u.replicas.push_back({"trial 1/echo", 0, "h", {{100, 25.5, int64_t{28} << 20, 1, {}}}});
  u.replicas.push_back({"trial 2/echo", 0, "h", {}});
  EXPECT_EQ(FormatUsage(u, 101),
            "Resources:\n"
            "  REPLICA             HOST  CPU%  RSS       PROCS  GPU  GPU%  GPU MEM\n"
            "  trial 0/echo/0      h     50.0  100.0MiB  2      -    -     -\n"
            "  trial 1/echo/0      h     25.5  28.0MiB   1      -    -     -\n"
            "  trial 2/echo/0      h     -     -         -      -    -     -\n"
            "  TOTAL (2 replicas)        75.5  128.0MiB  3\n");
}

TEST(FormatBytes, BinaryUnits) {
  EXPECT_EQ(FormatBytes(0), "0B");
  EXPECT_EQ(FormatBytes(1023), "1023B");
  EXPECT_EQ(FormatBytes(1536), "1.5KiB");
  EXPECT_EQ(FormatBytes(int64_t{3} << 40), "3.0TiB");
}

}  // namespace
}  // namespace torchx::schedulers
