// Reading a user's input file whole (a pipeline or sweep file, an AppDef), with one size limit
// and one set of errors, so a hostile or mistaken path (a 10 GiB log, /dev/zero) is refused with
// a clear message instead of filling memory (docs/cli.md, "Limits").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "torchx/status.h"

namespace torchx::internal {

/// The most a spec, pipeline, sweep or component file may hold.
inline constexpr size_t kMaxInputFileBytes = size_t{16} << 20;

/// The whole of `path`. kNotFound when it cannot be read, kInvalidArgument when it holds more than
/// `max_bytes` (or is not a regular file that can be measured); `what` names it in the message
/// ("pipeline file").
Result<std::string> ReadInputFile(const std::string& path, std::string_view what,
                                  size_t max_bytes = kMaxInputFileBytes);

}  // namespace torchx::internal
