// Why a local_docker app did not succeed (Capability::kFailureClassification): a pure function of
// how each replica's container ended, as the engine's inspect reports it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers::docker {

/// One replica's container, ended.
struct ContainerEnd {
  std::string replica;  ///< "role/id"
  int64_t exit_code = 0;
  bool oom_killed = false;  ///< State.OOMKilled
  bool cancelled = false;   ///< cancelled by the launcher (torchx cancel)
  std::string error;        ///< State.Error: the engine could not run or keep it
};

/// The gravest end: an engine error (engine_lost), an OOM kill (out_of_memory), a non-zero exit
/// of the process itself (user_error), a SIGKILL/SIGTERM the launcher did not send (`docker kill`,
/// `docker stop`: cancelled, a person's decision), the launcher's cancel (cancelled); else unknown.
/// An engine restart that stops the containers reads as `docker stop` (run dockerd with
/// live-restore to keep them running through one).
FailureReport ClassifyContainerEnds(const std::vector<ContainerEnd>& ends);

}  // namespace torchx::schedulers::docker
