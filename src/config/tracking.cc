#include "torchx/config/tracking.h"

#include <algorithm>
#include <cstdlib>

#include "core/strings.h"

namespace torchx::config {
namespace {

std::optional<std::string> Env(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

}  // namespace

std::vector<std::pair<std::string, std::optional<std::string>>> ConfiguredTrackers(const TorchxConfig& config) {
  std::vector<std::pair<std::string, std::optional<std::string>>> out;
  auto add = [&out](std::string name) {
    bool seen = std::any_of(out.begin(), out.end(), [&](const auto& t) { return t.first == name; });
    if (!name.empty() && !seen) out.emplace_back(std::move(name), std::nullopt);
  };
  if (std::optional<std::string> names = Env("TORCHX_TRACKERS")) {
    for (const std::string& piece : internal::SplitAny(*names, ",")) add(std::string(internal::Strip(piece)));
  } else {
    for (const ConfigEntry* entry : config.Section("torchx:tracker")) add(entry->key);
  }
  // Each tracker's config, whichever way the names came.
  for (auto& [name, value] : out) {
    value = Env(specs::TrackerConfigEnvName(name));
    if (!value) {
      if (const ConfigEntry* c = config.Get("tracker:" + name, "config")) value = c->value;
    }
  }
  return out;
}

std::string ParentRunId(std::string given) { return Env("TORCHX_PARENT_RUN_ID").value_or(std::move(given)); }

specs::Tracking ConfiguredTracking(const TorchxConfig& config, std::string parent_run_id) {
  return specs::Tracking{ParentRunId(std::move(parent_run_id)), ConfiguredTrackers(config)};
}

}  // namespace torchx::config
