#include "devices/gpu_metrics_wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace torchx::devices::internal {
namespace {

using ::testing::HasSubstr;

TEST(GpuMetricsWire, AReadingComesBackAsItWentWithUnsetFiguresLeftUnset) {
  GpuDeviceSample full;
  full.index = 0;
  full.name = "NVIDIA H100 80GB HBM3";
  full.utilization_percent = 87.0;
  full.memory_used_bytes = int64_t{40} << 30;
  full.memory_total_bytes = int64_t{80} << 30;
  full.processes = {{4242, int64_t{1} << 30, 42.0}, {4243, std::nullopt, std::nullopt}};
  GpuDeviceSample bare;  // a device the driver answered nothing else for
  bare.index = 1;
  std::string line = GpuReadingToLine(std::vector<GpuDeviceSample>{full, bare});
  EXPECT_EQ(line.find('\n'), std::string::npos);
  auto back = GpuReadingFromLine(line);
  ASSERT_TRUE(back) << back.error().message();
  ASSERT_EQ(back->size(), 2u);
  const GpuDeviceSample& d = (*back)[0];
  EXPECT_EQ(d.index, 0);
  EXPECT_EQ(d.name, full.name);
  EXPECT_EQ(d.utilization_percent, 87.0);
  EXPECT_EQ(d.memory_used_bytes, full.memory_used_bytes);
  EXPECT_EQ(d.memory_total_bytes, full.memory_total_bytes);
  ASSERT_EQ(d.processes.size(), 2u);
  EXPECT_EQ(d.processes[0].pid, 4242);
  EXPECT_EQ(d.processes[0].memory_used_bytes, int64_t{1} << 30);
  EXPECT_EQ(d.processes[0].utilization_percent, 42.0);
  EXPECT_FALSE(d.processes[1].memory_used_bytes.has_value());
  EXPECT_FALSE(d.processes[1].utilization_percent.has_value());
  const GpuDeviceSample& b = (*back)[1];
  EXPECT_EQ(b.index, 1);
  EXPECT_FALSE(b.utilization_percent.has_value());
  EXPECT_FALSE(b.memory_used_bytes.has_value());
  EXPECT_FALSE(b.memory_total_bytes.has_value());
  EXPECT_TRUE(b.processes.empty());
}

TEST(GpuMetricsWire, AnErrorKeepsItsMessageAndABadLineIsInternal) {
  auto none = GpuReadingFromLine(GpuReadingToLine(UnavailableError("no NVIDIA driver on this host (x not found)")));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), StatusCode::kUnavailable);
  EXPECT_EQ(none.error().message(), "no NVIDIA driver on this host (x not found)");
  for (const char* bad : {"", "not json", "[]", "{\"ok\": 1}", "{\"ok\": true}", "{\"ok\": true, \"devices\": [{}]}"}) {
    auto got = GpuReadingFromLine(bad);
    ASSERT_FALSE(got) << bad;
    EXPECT_EQ(got.error().code(), StatusCode::kInternal) << bad;
    EXPECT_THAT(got.error().message(), HasSubstr("unreadable line")) << bad;
  }
  auto empty = GpuReadingFromLine(GpuReadingToLine(std::vector<GpuDeviceSample>{}));
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

}  // namespace
}  // namespace torchx::devices::internal
