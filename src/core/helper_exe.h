// Finding the project's helper executables (torchx-supervisor, torchx-device-probe,
// torchx-gpu-metrics, torchx-composite-driver, torchx-ui) from any host: the CLI, a Python process
// (the extension), the supervisor, a test binary.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torchx/status.h"

namespace torchx::internal {

/// The file this project's code runs from: the shared object holding it (the Python extension),
/// or the main program when the code is linked into it (the CLI, a test). Never found through the
/// interpreter: a venv's `python` is the base interpreter's binary (/proc/self/exe resolves to
/// it), and what lies beside that belongs to the base's install, another build of torchx.
struct SelfImage {
  std::filesystem::path path;  ///< absolute, symlinks resolved
  bool main_program = false;   ///< the code is linked into the executable itself
};
std::optional<SelfImage> FindSelfImage();

/// The directories that hold this install's own files (helpers, back-end modules, the carried
/// libcurl), nearest first: the image's directory (the extension's and the helpers' is the package
/// directory; a back-end module's is torchx/backends, so the one above it too), and for a main program installed as a
/// wheel's script in <prefix>/bin, that wheel's package directory
/// (<prefix>/lib[64]/pythonX.Y/{site,dist}-packages/torchx, those that exist).
std::vector<std::filesystem::path> PackageDirs();

/// Looks, in order: $<env_var>, in each of PackageDirs() (beside this project's image first), in
/// <image dir>/../libexec/torchx for a main program, `build_path` (the build tree, for tests),
/// then PATH. kFailedPrecondition naming `env_var` when not found.
Result<std::string> FindHelperExecutable(std::string_view name, const char* env_var, const char* build_path);

}  // namespace torchx::internal
