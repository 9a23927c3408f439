// This host as local_cwd's one host (`torchx hosts -s local_cwd`): its name, the CPUs this process
// may run on, memory from /proc/meminfo, the load as CPUs in use, and the NVIDIA GPUs the driver
// lists. Read from /proc and /sys only: no library, no engine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "torchx/schedulers/hosts.h"

namespace torchx::schedulers::local {

/// What /proc says of this host now (apps not filled in).
HostInfo ReadThisHost();

/// A small /proc file, whole ("" when it cannot be read).
std::string ReadProcFile(const char* path);

/// /proc/meminfo's MemTotal and MemAvailable in MiB ({0, 0} for what it lacks).
std::pair<int64_t, int64_t> ParseMemInfo(std::string_view meminfo);

}  // namespace torchx::schedulers::local
