// Internal: how AppStatus formats a replica's error message (exposed for tests).
#pragma once

#include <string>

namespace torchx::specs::internal {

/// Keeps only the RPC-worker span or the line before a nested "Exception", then word-wraps at
/// the first space after `width` characters, indenting continuation lines to `header`'s width.
std::string FormatErrorMessage(std::string msg, std::string header, size_t width = 80);

}  // namespace torchx::specs::internal
