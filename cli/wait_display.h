// Waiting for an app in `torchx run --wait`: on a terminal, a live block of per-replica states
// redrawn in place; otherwise one plain line per state change (logs and CI stay readable).
#pragma once

#include <optional>
#include <string>

#include "torchx/runner/runner.h"

namespace torchx::cli {

/// Waits for `handle` to end, showing progress on stderr. nullopt if the app disappears.
Result<std::optional<specs::AppStatus>> WaitWithDisplay(runner::Runner& runner, const std::string& handle);

}  // namespace torchx::cli
