// Python component files for the CLI (`torchx run ./file.py:fn`, `torchx run pkg.module:fn`).
//
// The component runs in a child `python -m torchx.components._bridge` (started only when such a
// component is named): it describes the function as a ComponentSpec, the core parses the CLI
// arguments against it like any builtin's, and the child calls the function with the typed
// values and returns the AppDef as JSON. The interpreter is $TORCHX_PYTHON, else the python3
// beside this executable (a virtual env's bin/), else python3 on PATH.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string_view>

#include "torchx/components/component.h"

namespace torchx::components::internal {

/// kNotFound for a missing file, module or function; kInvalidArgument with the linter's
/// messages; kFailedPrecondition when Python or the torchx package cannot be started;
/// kDeadlineExceeded when `timeout` is given and a call (describe, or a later build) takes
/// longer (the child is stopped).
Result<std::unique_ptr<Component>> LoadPythonComponent(std::string_view name,
                                                       std::optional<std::chrono::milliseconds> timeout = {});

}  // namespace torchx::components::internal
