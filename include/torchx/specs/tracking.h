// Tracking: which tracker run a launch belongs to and which trackers its jobs set up. The runner
// turns it into every role's environment (TORCHX_PARENT_RUN_ID, TORCHX_TRACKERS,
// TORCHX_TRACKER_<NAME>_CONFIG, TorchX's names); config::ConfiguredTracking reads it from the
// environment and `.torchxconfig` by TorchX's rules, for the CLI and the Python package alike.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace torchx::specs {

struct Tracking {
  std::string parent_run_id;  ///< every role gets TORCHX_PARENT_RUN_ID (empty: none)
  /// Trackers in order: name -> config (nullopt or empty: none).
  std::vector<std::pair<std::string, std::optional<std::string>>> trackers;
};

/// Where a job finds tracker `name`'s config: TORCHX_TRACKER_<NAME>_CONFIG.
std::string TrackerConfigEnvName(std::string_view name);

/// The variables `tracking` sets in every role, in a stable order (none for an empty Tracking).
std::vector<std::pair<std::string, std::string>> TrackingEnv(const Tracking& tracking);

}  // namespace torchx::specs
