#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/temp_dir.h"
#include "torchx/devices/gpu_metrics.h"

namespace torchx::devices {
namespace {

using ::testing::HasSubstr;

// A host without any NVIDIA device node is answered at once: no helper process for it.
TEST(GpuMetricsHelper, AHostWithoutAnNvidiaDeviceIsToldSoWithoutAHelper) {
  for (const char* node : {"/dev/nvidiactl", "/proc/driver/nvidia", "/dev/dxg"}) {
    if (::access(node, F_OK) == 0) GTEST_SKIP() << node << " exists: this host has a driver";
  }
  testing::ScopedEnv lib("TORCHX_NVML_LIBRARY", "");
  testing::ScopedEnv helper("TORCHX_GPU_METRICS", "/nonexistent/torchx-gpu-metrics");  // never started
  auto got = StartGpuMetricsHelper();
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(got.error().message(), HasSubstr("no NVIDIA driver on this host"));
}

// A library named by $TORCHX_NVML_LIBRARY is always tried, through the helper: its reason comes back.
TEST(GpuMetricsHelper, ANamedLibraryIsOpenedByTheHelperWhichSaysWhyNot) {
  testing::ScopedEnv lib("TORCHX_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
  auto got = StartGpuMetricsHelper();
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(got.error().message(), HasSubstr("/nonexistent/libnvidia-ml.so.1 not found"));
}

}  // namespace
}  // namespace torchx::devices
