// AppHandle: `{scheduler}://{session_name}/{app_id}`, the one string that identifies a submitted
// app to every later verb (status, log, cancel...), from any process.
#pragma once

#include <string>
#include <string_view>

#include "torchx/status.h"

namespace torchx::specs {

/// The runner's session name (TorchX deprecated custom names).
inline constexpr std::string_view kDefaultSessionName = "torchx";

struct ParsedAppHandle {
  std::string scheduler_backend;
  std::string session_name;
  std::string app_id;
  friend bool operator==(const ParsedAppHandle&, const ParsedAppHandle&) = default;
};

std::string MakeAppHandle(std::string_view scheduler_backend, std::string_view session_name, std::string_view app_id);

/// TorchX's rules: scheduler = everything before the last "://" that leaves a "/<app_id>" after
/// it, session = everything up to the last "/" (may be empty: "k8s:///foo"), app_id = the
/// non-empty rest. kInvalidArgument with TorchX's wording otherwise, and for a handle longer than
/// kMaxAppHandleBytes (named by its size, not quoted whole).
Result<ParsedAppHandle> ParseAppHandle(std::string_view handle);

/// The longest handle any verb, the REST API or the Python Runner takes (docs/cli.md): far above
/// any engine's ids, far below what would make an error line unreadable.
inline constexpr size_t kMaxAppHandleBytes = 4096;

}  // namespace torchx::specs
