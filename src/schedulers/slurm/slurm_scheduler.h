// `slurm`: TorchX's Slurm scheduler over the Slurm command-line tools (sbatch, squeue, sacct,
// scancel, sinfo), run through a CommandRunner: the real one finds them on PATH; unit tests pass a
// fake that answers as Slurm does (slurm_scheduler_test.cc). See docs/slurm.md.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/subprocess.h"
#include "http/http.h"
#include "schedulers/slurm/snapshot_store.h"
#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers::slurm {

/// How a scheduler reads job states (queue_reader.h): through `store` (null: a store of its own),
/// refreshed every `refresh_interval` seconds.
struct QueueReading {
  std::shared_ptr<SnapshotStore> store;
  double refresh_interval = 2;
};

/// `tools` runs sbatch, squeue, sacct, scancel and sinfo (MakeSystemCommandRunner for the real ones);
/// followed logs poll on `clock` (null: real time); `engine_http` reaches the local container engine
/// that builds and pushes workspace images (workspace_type=docker; null: libcurl); `reading` says
/// where job states are shared.
std::unique_ptr<Scheduler> MakeSlurmScheduler(const std::string& session_name,
                                              std::shared_ptr<internal::CommandRunner> tools,
                                              std::shared_ptr<const Clock> clock = nullptr,
                                              std::shared_ptr<internal::HttpClient> engine_http = nullptr,
                                              QueueReading reading = {});

/// The refresh interval a .torchxconfig [slurm] section sets (`status_interval`, seconds; default
/// 2); kInvalidArgument naming the option for anything but a number in (0, 600].
Result<double> StatusInterval(const std::map<std::string, std::string, std::less<>>& settings);

/// `slurm` over the real tools, for the build's table of linked-in back-ends.
std::vector<SchedulerEntry> BackendSchedulers();

}  // namespace torchx::schedulers::slurm
