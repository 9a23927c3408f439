// The local_docker request: what a dry run builds (DryRunInfo.payload), what Python's
// DockerScheduler shows as docker-py's run arguments and may edit, and what Schedule sends: one
// container per replica, each an Engine API create body. Decoding never throws: an edited or
// malformed payload is kInvalidArgument naming the field.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "torchx/status.h"

namespace torchx::schedulers::docker {

struct DockerContainerRequest {
  std::string name;         ///< the container's name (ContainerName), unique per replica
  std::string config_json;  ///< the Engine API's POST /containers/create body: a JSON object with Image
};

struct DockerRequest {
  std::string app_id;
  std::vector<DockerContainerRequest> containers;  ///< at least one
};

std::string DockerRequestToJson(const DockerRequest& request);
/// kInvalidArgument naming the field ("local_docker request: containers[1].config.Image: ...").
Result<DockerRequest> DockerRequestFromJson(std::string_view payload);

}  // namespace torchx::schedulers::docker
