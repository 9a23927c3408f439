#include "common.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/strings.h"
#include "torchx/config/run_cfg.h"
#include "torchx/specs/app_handle.h"

namespace torchx::cli {

Result<config::TorchxConfig> LoadConfig() {
  std::error_code ec;
  return config::TorchxConfig::Load(std::filesystem::current_path(ec).string());
}

namespace {

std::optional<std::string> Env(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::vector<std::pair<std::string, std::optional<std::string>>> ConfiguredTrackers(const config::TorchxConfig& config) {
  std::vector<std::pair<std::string, std::optional<std::string>>> out;
  std::optional<std::string> names_env = Env("TORCHX_TRACKERS");
  if (names_env) {
    for (const std::string& piece : internal::SplitAny(*names_env, ",")) {
      std::string name(internal::Strip(piece));
      bool seen = std::any_of(out.begin(), out.end(), [&](const auto& t) { return t.first == name; });
      if (!name.empty() && !seen) out.emplace_back(name, std::nullopt);
    }
  } else {
    for (const config::ConfigEntry* entry : config.Section("torchx:tracker"))
      out.emplace_back(entry->key, std::nullopt);
  }
  // Each tracker's config: $TORCHX_TRACKER_<NAME>_CONFIG, else `[tracker:<name>] config`, whichever
  // way the names came.
  for (auto& [name, value] : out) {
    value = Env(runner::TrackerConfigEnvName(name));
    if (!value) {
      if (const config::ConfigEntry* c = config.Get("tracker:" + name, "config")) value = c->value;
    }
  }
  return out;
}

}  // namespace

runner::RunnerOptions RunnerOptionsFrom(const config::TorchxConfig& config, const std::string& parent_run_id) {
  runner::RunnerOptions opts;
  for (const std::string& section : config.SectionNames()) {
    if (section.rfind("component:", 0) == 0) {
      std::string name = section.substr(10);
      opts.component_defaults[name] = config.ComponentDefaults(name);
    }
  }
  opts.parent_run_id = Env("TORCHX_PARENT_RUN_ID").value_or(parent_run_id);
  opts.trackers = ConfiguredTrackers(config);
  return opts;
}

Result<specs::Cfg> ParseCfg(runner::Runner& runner, const std::string& scheduler, const std::string& cfg_str,
                            const config::TorchxConfig& config) {
  TORCHX_ASSIGN_OR_RETURN(specs::RunOpts opts, runner.SchedulerRunOpts(scheduler));
  std::vector<std::string> warnings;
  TORCHX_ASSIGN_OR_RETURN(specs::Cfg cfg,
                          config::ResolveRunCfg(scheduler, opts, {{config::CfgSource::Form::kString, cfg_str, "-cfg"}},
                                                config, config::UnknownOptions::kWarn, &warnings));
  for (const std::string& w : warnings) std::fprintf(stderr, "torchx: warning: %s\n", w.c_str());
  return cfg;
}

bool StdoutIsTerminal() { return ::isatty(1) == 1; }

Status AppNotFound(const std::string& handle) {
  auto parsed = specs::ParseAppHandle(handle);
  if (!parsed) return parsed.error();
  return NotFoundError(fmt::format("AppDef: {}, does not exist or has been removed from {}'s data plane",
                                   parsed->app_id, parsed->scheduler_backend));
}

}  // namespace torchx::cli
