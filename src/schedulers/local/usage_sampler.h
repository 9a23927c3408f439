// What the local supervisor samples every few seconds for the resource view: each replica's CPU
// and resident memory, summed over its process tree (the leader, its descendants and whatever is
// left in its process group), and its GPU figures, matched to the tree by pid from the GPU
// driver's process list. The OS is behind ProcSource (and devices::GpuMetrics), so the sums and
// rates are table-tested against a fake; SystemProcSource reads /proc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "torchx/devices/gpu_metrics.h"
#include "torchx/schedulers/usage.h"

namespace torchx::schedulers::local {

/// The fields of /proc/<pid>/stat the sampler reads.
struct ProcStat {
  int pid = 0;
  int ppid = 0;
  int pgrp = 0;
  uint64_t cpu_ticks = 0;    ///< utime + stime
  uint64_t start_ticks = 0;  ///< since boot
  int64_t rss_pages = 0;
  char state = 'R';  ///< R, S, D, Z (exited, not yet reaped), ...
};

/// Parses one /proc/<pid>/stat line (the command name may hold spaces and parentheses);
/// nullopt for anything else.
std::optional<ProcStat> ParseProcStat(std::string_view text);

class ProcSource {
 public:
  virtual ~ProcSource() = default;
  /// Every process that could be read (one vanishing while read is skipped).
  virtual std::vector<ProcStat> Processes() = 0;
  /// Seconds since boot (the clock /proc's start times count on).
  virtual double UptimeSeconds() = 0;
  virtual long TicksPerSecond() = 0;
  virtual long PageSize() = 0;
};

/// /proc of this host.
class SystemProcSource final : public ProcSource {
 public:
  std::vector<ProcStat> Processes() override;
  double UptimeSeconds() override;
  long TicksPerSecond() override;
  long PageSize() override;
};

class UsageSampler {
 public:
  /// `gpus` may be null (no driver): samples then carry no GPU figures.
  UsageSampler(ProcSource& procs, devices::GpuMetrics* gpus) : procs_(procs), gpus_(gpus) {}

  struct Result {
    std::vector<UsageSample> replicas;  ///< one per leader given; empty figures for a leader of 0
    std::optional<UsageSample> host;    ///< the devices' own figures, when there is a GPU reading
  };
  /// One sample of each replica whose leader pid is given (0: not running). CPU % is the rate
  /// since the previous sample for processes seen then, else since the process started.
  Result Sample(const std::vector<int>& leaders, double now_epoch);

 private:
  ProcSource& procs_;
  devices::GpuMetrics* gpus_;
  struct Seen {
    uint64_t start_ticks;
    uint64_t cpu_ticks;
  };
  std::map<int, Seen> seen_;  // pid -> what the previous sample read
  std::optional<double> prev_uptime_;
};

}  // namespace torchx::schedulers::local
