// `slurm`: TorchX's Slurm scheduler over the Slurm command-line tools (sbatch, squeue, sacct,
// scancel, sinfo), found on PATH. See docs/slurm.md.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers::slurm {

std::unique_ptr<Scheduler> MakeSlurmScheduler(const std::string& session_name);

/// `slurm`, for the build's table of linked-in back-ends.
std::vector<SchedulerEntry> BackendSchedulers();

}  // namespace torchx::schedulers::slurm
