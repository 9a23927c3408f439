#include "torchx/specs/tracking.h"

#include <algorithm>
#include <cctype>

namespace torchx::specs {

std::string TrackerConfigEnvName(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  return "TORCHX_TRACKER_" + upper + "_CONFIG";
}

std::vector<std::pair<std::string, std::string>> TrackingEnv(const Tracking& tracking) {
  std::vector<std::pair<std::string, std::string>> env;
  if (!tracking.parent_run_id.empty()) env.emplace_back("TORCHX_PARENT_RUN_ID", tracking.parent_run_id);
  std::string names;
  for (const auto& [name, config] : tracking.trackers) names += (names.empty() ? "" : ",") + name;
  if (!names.empty()) env.emplace_back("TORCHX_TRACKERS", names);
  for (const auto& [name, config] : tracking.trackers) {
    if (config && !config->empty()) env.emplace_back(TrackerConfigEnvName(name), *config);
  }
  return env;
}

}  // namespace torchx::specs
