// `local_docker`: one container per replica on the local container engine (dockerd or podman),
// through the Docker Engine API over its unix socket (an EngineClient, whose HttpClient unit tests
// replace with a fake engine: docker_scheduler_test.cc). See docs/containers.md.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "container_engine/engine_client.h"
#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers::docker {

/// Every engine call goes through `engine` (over MakeCurlHttpClient() for a real engine).
/// `clock`: what retries wait on (null: real time).
std::unique_ptr<Scheduler> MakeDockerScheduler(const std::string& session_name, container_engine::EngineClient engine,
                                               std::shared_ptr<const Clock> clock = nullptr);

/// `local_docker` on the engine at $DOCKER_HOST (else /var/run/docker.sock), for the build's
/// table of linked-in back-ends.
std::vector<SchedulerEntry> BackendSchedulers();

}  // namespace torchx::schedulers::docker
