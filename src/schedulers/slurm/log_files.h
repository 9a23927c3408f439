// A replica's Slurm output files (`slurm-<job>-<role>-<i>.out`, `.err`) read as log lines, and
// followed while the job runs.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "torchx/clock.h"
#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers::slurm {

/// Lines of `files` in turn. With `follow`, waits at the end of
/// each file for more (polling every 200 ms on `clock`) until `finished()` (the job is over); a
/// missing file reads as empty.
std::unique_ptr<LogIterator> MakeReplicaLogLines(std::vector<std::filesystem::path> files, bool follow,
                                                 std::function<bool()> finished, std::shared_ptr<const Clock> clock);

}  // namespace torchx::schedulers::slurm
