// GPU figures for the resource view: utilisation and memory per device, and the memory each
// process holds on it. Read through NVML, which the NVIDIA driver installs (libnvidia-ml.so.1):
// opened with dlopen the first time a sampler asks, never linked, so a host without the driver
// runs everything else and says why its GPU columns are empty. OpenNvml is linked only into the
// helper executable, torchx-gpu-metrics; everything else reads through StartGpuMetricsHelper.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "torchx/status.h"

namespace torchx::devices {

struct GpuProcess {
  int pid = 0;  ///< in the driver's pid namespace
  std::optional<int64_t> memory_used_bytes;
  std::optional<double> utilization_percent;  ///< the process's SM share, where the driver samples it
};

struct GpuDeviceSample {
  int index = 0;
  std::string name;
  std::optional<double> utilization_percent;
  std::optional<int64_t> memory_used_bytes;
  std::optional<int64_t> memory_total_bytes;
  std::vector<GpuProcess> processes;  ///< compute processes on the device
};

/// One reading of every GPU on the host. One instance per thread.
class GpuMetrics {
 public:
  virtual ~GpuMetrics() = default;
  virtual Result<std::vector<GpuDeviceSample>> Sample() = 0;
};

/// NVML read in a helper process, torchx-gpu-metrics (found as internal::FindHelperExecutable
/// finds the project's helpers; $TORCHX_GPU_METRICS names it), which this starts: the caller
/// never loads the driver's library, so the local supervisor links statically (dlopen needs the
/// dynamic loader). kUnavailable with the helper's reason (OpenNvml's) when it has no NVML, when
/// it cannot be found or started, or at once, with no helper, on a host with no NVIDIA device
/// node (unless $TORCHX_NVML_LIBRARY names a library). A helper that stops answering is killed
/// and makes every later Sample kUnavailable.
Result<std::unique_ptr<GpuMetrics>> StartGpuMetricsHelper();

/// NVML from `library` (default: $TORCHX_NVML_LIBRARY, else libnvidia-ml.so.1). kUnavailable
/// with the reason when there is no driver ("libnvidia-ml.so.1 not found"), its initialisation
/// fails, or it lacks a function every driver since CUDA 10 exports.
Result<std::unique_ptr<GpuMetrics>> OpenNvml(const std::string& library = "");

}  // namespace torchx::devices
