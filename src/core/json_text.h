// JSON text written directly, for documents too large to build as a nlohmann object first (a
// fan-out's plan and summary hold thousands of strings).
#pragma once

#include <string>
#include <string_view>

namespace torchx::internal {

/// Appends `s` as a JSON string: what nlohmann's dump gives for it (invalid UTF-8 replaced by
/// U+FFFD, non-ASCII kept), with plain printable ASCII copied as is.
void AppendJsonString(std::string& out, std::string_view s);

}  // namespace torchx::internal
