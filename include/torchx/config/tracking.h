// Which trackers a launch sets up, read by TorchX's rules from the environment and
// `.torchxconfig`: the one reading for the CLI (`torchx run`) and the Python package
// (torchx.tracker.get_configured_trackers, Runner.dryrun).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "torchx/config/torchx_config.h"
#include "torchx/specs/tracking.h"

namespace torchx::config {

/// $TORCHX_TRACKERS (comma-separated names, blanks and repeats dropped) when set, else the keys of
/// `[torchx:tracker]`; each with $TORCHX_TRACKER_<NAME>_CONFIG, else `[tracker:<name>] config`,
/// else nullopt.
std::vector<std::pair<std::string, std::optional<std::string>>> ConfiguredTrackers(const TorchxConfig& config);

/// $TORCHX_PARENT_RUN_ID when set (even empty: a parent launcher cleared it), else `given`.
std::string ParentRunId(std::string given);

/// Both of the above.
specs::Tracking ConfiguredTracking(const TorchxConfig& config, std::string parent_run_id);

}  // namespace torchx::config
