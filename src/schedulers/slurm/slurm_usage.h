// Reading a running job's resource use from Slurm: `sstat` rows (slurmd's jobacct_gather figures
// of each running step) and `squeue --steps` start times, joined to the app's replicas (one het
// component per replica, each with its own job id). Pure: the scheduler runs the tools.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schedulers/slurm/slurm_status.h"
#include "torchx/schedulers/usage.h"
#include "torchx/status.h"

namespace torchx::schedulers::slurm {

/// sstat's fields, in this order: the step, its TRES totals (cpu time and memory), its nodes.
inline constexpr std::string_view kSstatFields = "JobID,TRESUsageInTot,Nodelist";
/// squeue --steps' columns: the step and when it started.
inline constexpr std::string_view kSqueueStepFormat = "StepId:|,StartTime:|";

struct StepUsage {
  std::string job_id;  ///< the component's own job id ("436" of "436.0")
  std::string step;    ///< "0", "1", "batch", "extern"
  std::optional<double> cpu_seconds;
  std::optional<int64_t> memory_bytes;
  /// Where slurmd gathers GPU figures (the gpu/nvml plugin): the step's GPUs together.
  std::optional<double> gpu_utilization_percent;
  std::optional<int64_t> gpu_memory_bytes;
  std::string nodes;
};

/// A Slurm duration ("1-02:03:04", "02:03:04", "03:04", "03:04.500") as seconds; nullopt for
/// anything else.
std::optional<double> SlurmDuration(std::string_view text);

/// Rows of `sstat -a -n --noconvert --parsable2 -o <kSstatFields>`. kInvalidArgument for a row
/// of another shape.
Result<std::vector<StepUsage>> ParseSstat(std::string_view text);

/// Rows of `squeue --steps -h -O <kSqueueStepFormat>`: "436.0" -> its start (epoch seconds).
std::map<std::string, double, std::less<>> ParseStepStarts(std::string_view text);

/// The app's replicas (its jobs, as ParseSqueueRows reads them) with one sample each at `now`:
/// CPU % is the CPU time of the replica's srun steps over the time since the first of them started
/// (the average since the start: jobacct_gather keeps totals, not rates), memory their summed
/// resident memory at slurmd's last gather, and the steps' GPUs as one row where slurmd gathers
/// them (gres/gpuutil, gres/gpumem: Slurm does not split them by device). The batch and extern steps are the
/// launcher's, not the replica's, and are left out. A replica with no running step has no sample.
AppUsage UsageFromSteps(const std::vector<SlurmJob>& jobs, const std::vector<StepUsage>& steps,
                        const std::map<std::string, double, std::less<>>& starts, double now);

}  // namespace torchx::schedulers::slurm
