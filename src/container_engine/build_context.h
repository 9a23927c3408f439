// The build context local_docker sends to the engine's build API: a tar (ustar) of a workspace
// directory, minus what its .dockerignore excludes, plus an in-memory Dockerfile when the
// workspace has no Dockerfile.torchx (TorchX's default: `FROM <image>` then `COPY . .`).
#pragma once

#include <string>

#include "torchx/status.h"

namespace torchx::container_engine {

struct BuildContext {
  std::string tar;         ///< the context archive
  std::string dockerfile;  ///< its path inside the archive
};

/// kInvalidArgument for a workspace that is not a directory, or a path too long for ustar.
Result<BuildContext> MakeBuildContext(const std::string& workspace, const std::string& base_image);

}  // namespace torchx::container_engine
