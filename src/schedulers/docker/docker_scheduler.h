// `local_docker`: one container per replica on the local container engine (dockerd or podman),
// through the Docker Engine API over its unix socket. See docs/containers.md.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers::docker {

std::unique_ptr<Scheduler> MakeDockerScheduler(const std::string& session_name);

/// `local_docker`, for the build's table of linked-in back-ends.
std::vector<SchedulerEntry> BackendSchedulers();

}  // namespace torchx::schedulers::docker
