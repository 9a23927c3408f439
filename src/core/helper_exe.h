// Finding the project's helper executables (torchx-supervisor, torchx-device-probe) from any
// host: the CLI, a Python process (the extension), a test binary.
#pragma once

#include <string>
#include <string_view>

#include "torchx/status.h"

namespace torchx::internal {

/// Looks, in order: $<env_var>, beside this executable, in <exe dir>/../libexec/torchx, beside
/// the shared object holding this code (the Python extension), `build_path` (the build tree,
/// for tests), then PATH. kFailedPrecondition naming `env_var` when not found.
Result<std::string> FindHelperExecutable(std::string_view name, const char* env_var, const char* build_path);

}  // namespace torchx::internal
