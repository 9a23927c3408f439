// One GPU reading as one line of JSON: what torchx-gpu-metrics writes and its client reads
// (gpu_metrics.h). A line is {"ok": true, "devices": [...]} or {"ok": false, "message": "..."};
// a figure the driver did not give is left out, so it stays unset on the other side.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "torchx/devices/gpu_metrics.h"

namespace torchx::devices::internal {

/// The line for a reading, or for the error that stands in for one (no newline).
std::string GpuReadingToLine(const Result<std::vector<GpuDeviceSample>>& reading);

/// The reading a line carries; the error a line reports keeps its message. kInternal for a
/// line that is not one GpuReadingToLine writes.
Result<std::vector<GpuDeviceSample>> GpuReadingFromLine(std::string_view line);

}  // namespace torchx::devices::internal
