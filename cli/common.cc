#include "common.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/strings.h"
#include "torchx/config/run_cfg.h"
#include "torchx/config/tracking.h"
#include "torchx/specs/app_handle.h"

namespace torchx::cli {

Result<config::TorchxConfig> LoadConfig() {
  std::error_code ec;
  return config::TorchxConfig::Load(std::filesystem::current_path(ec).string());
}

runner::RunnerOptions ReaderRunnerOptions() {
  runner::RunnerOptions opts;
  if (auto config = LoadConfig(); config.ok()) opts.scheduler_settings = config::SchedulerSettings(*config);
  return opts;
}

runner::RunnerOptions RunnerOptionsFrom(const config::TorchxConfig& config, const std::string& parent_run_id) {
  runner::RunnerOptions opts;
  for (const std::string& section : config.SectionNames()) {
    if (section.rfind("component:", 0) == 0) {
      std::string name = section.substr(10);
      opts.component_defaults[name] = config.ComponentDefaults(name);
    }
  }
  opts.tracking = config::ConfiguredTracking(config, parent_run_id);
  opts.scheduler_settings = config::SchedulerSettings(config);
  return opts;
}

Result<specs::Cfg> ParseCfg(runner::Runner& runner, const std::string& scheduler, const std::string& cfg_str,
                            const config::TorchxConfig& config) {
  TORCHX_ASSIGN_OR_RETURN(specs::RunOpts opts, runner.SchedulerRunOpts(scheduler));
  std::vector<std::string> warnings;
  TORCHX_ASSIGN_OR_RETURN(specs::Cfg cfg,
                          config::ResolveRunCfg(scheduler, opts, {{config::CfgSource::Form::kString, cfg_str, "-cfg"}},
                                                config, config::UnknownOptions::kRefuse, &warnings));
  for (const std::string& w : warnings) std::fprintf(stderr, "torchx: warning: %s\n", w.c_str());
  return cfg;
}

std::string FormatFailureTails(const std::vector<runner::ReplicaLogTail>& tails) {
  std::string out;
  for (const runner::ReplicaLogTail& t : tails) {
    if (t.lines.empty()) {
      out += fmt::format("{}/{} failed; its {} log is empty\n", t.role, t.replica_id, t.stream);
      continue;
    }
    out += fmt::format("{}/{} failed; the last {} line{} of its {}:\n", t.role, t.replica_id, t.lines.size(),
                       t.lines.size() == 1 ? "" : "s", t.stream == "stderr" ? "stderr" : "log");
    for (const std::string& line : t.lines) out += "    " + line + "\n";
  }
  return out;
}

Result<double> ParseWhen(const std::string& verb, const std::string& flag, const std::string& text, double now) {
  auto bad = [&] {
    return InvalidArgumentError(fmt::format(
        "{}: {} `{}`: give epoch seconds, a time such as 2026-11-26T10:00:00 (Z for UTC), or a duration before "
        "now such as 90s, 10m, 2h, 1d",
        verb, flag, text));
  };
  if (text.empty()) return bad();
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() && *end == '\0') return std::isfinite(v) ? Result<double>(v) : bad();
  if (end != text.c_str() && end[1] == '\0' && v >= 0) {
    switch (*end) {
      case 's':
        return now - v;
      case 'm':
        return now - v * 60;
      case 'h':
        return now - v * 3600;
      case 'd':
        return now - v * 86400;
      default:
        break;
    }
  }
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!rest) rest = strptime(text.c_str(), "%Y-%m-%d %H:%M:%S", &tm);
  if (!rest || (*rest != '\0' && std::string_view(rest) != "Z")) return bad();
  tm.tm_isdst = -1;
  std::time_t t = *rest == 'Z' ? timegm(&tm) : std::mktime(&tm);
  return static_cast<double>(t);
}

bool UseColor() {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return StdoutIsTerminal() && !(no_color && *no_color) && !(term && std::string_view(term) == "dumb");
}

std::string ColorState(std::string_view text, specs::AppState state, bool color) {
  if (!color) return std::string(text);
  const char* code = "";
  switch (state) {
    case specs::AppState::kRunning:
      code = "\033[34m";
      break;
    case specs::AppState::kSucceeded:
      code = "\033[32m";
      break;
    case specs::AppState::kFailed:
      code = "\033[31m";
      break;
    case specs::AppState::kCancelled:
      code = "\033[2m";
      break;
    case specs::AppState::kPending:
    case specs::AppState::kSubmitted:
      code = "\033[33m";
      break;
    default:
      return std::string(text);
  }
  return fmt::format("{}{}\033[0m", code, text);
}

bool StdoutIsTerminal() { return ::isatty(1) == 1; }

Status AppNotFound(const std::string& handle) {
  auto parsed = specs::ParseAppHandle(handle);
  if (!parsed) return parsed.error();
  return NotFoundError(fmt::format("AppDef: {}, does not exist or has been removed from {}'s data plane",
                                   parsed->app_id, parsed->scheduler_backend));
}

}  // namespace torchx::cli
