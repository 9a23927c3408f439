// The detached driver process of a pipeline whose steps the launcher sequences (anything but an
// all-Slurm pipeline): started in its own session so the terminal may close, and holding an
// flock on `<id>.driver.lock` while it lives, so "is a driver running?" needs no pid bookkeeping
// (the kernel drops the lock when the process dies, however it dies).
#pragma once

#include <string>

#include "torchx/status.h"

namespace torchx::pipelines {

/// Starts torchx-pipeline-driver for pipeline `id` of `state_dir`, in `cwd`, its output appended
/// to `<pipelines dir>/<id>.driver.log`. Returns its pid; does not wait for it.
Result<int> StartDriver(const std::string& state_dir, const std::string& pipelines_dir, const std::string& id,
                        const std::string& cwd);

/// Whether a driver holds pipeline `id`'s lock.
bool DriverRunning(const std::string& pipelines_dir, const std::string& id);

/// Takes pipeline `id`'s driver lock for the life of this process: false when another driver
/// holds it.
bool TakeDriverLock(const std::string& pipelines_dir, const std::string& id);

}  // namespace torchx::pipelines
