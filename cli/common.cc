#include "common.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "torchx/specs/app_handle.h"

namespace torchx::cli {

Result<config::TorchxConfig> LoadConfig() {
  std::error_code ec;
  return config::TorchxConfig::Load(std::filesystem::current_path(ec).string());
}

runner::RunnerOptions RunnerOptionsFrom(const config::TorchxConfig& config) {
  runner::RunnerOptions opts;
  for (const std::string& section : config.SectionNames()) {
    if (section.rfind("component:", 0) == 0) {
      std::string name = section.substr(10);
      opts.component_defaults[name] = config.ComponentDefaults(name);
    }
  }
  return opts;
}

Result<specs::Cfg> ParseCfg(runner::Runner& runner, const std::string& scheduler, const std::string& cfg_str,
                            const config::TorchxConfig& config) {
  TORCHX_ASSIGN_OR_RETURN(specs::RunOpts opts, runner.SchedulerRunOpts(scheduler));
  std::vector<std::string> unknown;
  TORCHX_ASSIGN_OR_RETURN(specs::Cfg cfg, opts.CfgFromString(cfg_str, &unknown));
  TORCHX_RETURN_IF_ERROR(config.ApplySchedulerDefaults(scheduler, opts, cfg, &unknown));
  for (const std::string& u : unknown) {
    std::fprintf(stderr, "torchx: warning: unknown run option for scheduler %s ignored: %s (see `torchx runopts %s`)\n",
                 scheduler.c_str(), u.c_str(), scheduler.c_str());
  }
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
