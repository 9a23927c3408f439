#include "torchx/config/run_cfg.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/spelling.h"

namespace torchx::config {
namespace {

std::vector<std::string> OptionNames(const specs::RunOpts& opts) {
  std::vector<std::string> names;
  for (const auto& [name, _] : opts.options()) names.push_back(name);
  return names;
}

Status Unknown(std::string_view scheduler, const specs::RunOpts& opts, const std::string& what,
               const std::string& key) {
  std::vector<std::string> valid = OptionNames(opts);
  return InvalidArgumentError(fmt::format("{}: unknown option for scheduler {}; valid options: {}.{}", what, scheduler,
                                          valid.empty() ? "none" : fmt::format("{}", fmt::join(valid, ", ")),
                                          internal::DidYouMeanSuffix(key, valid)));
}

// One source's options, unknown keys refused or collected.
Result<specs::Cfg> FromSource(std::string_view scheduler, const specs::RunOpts& opts, const CfgSource& source,
                              UnknownOptions policy, std::vector<std::string>* warnings) {
  std::vector<std::string> unknown;
  specs::Cfg cfg;
  if (source.form == CfgSource::Form::kString) {
    auto parsed = opts.CfgFromString(source.text, &unknown);
    if (!parsed) return parsed.error().WithContext(source.where);
    cfg = std::move(*parsed);
    for (std::string& pair : unknown) {
      pair = pair.substr(0, pair.find('='));  // CfgFromString reports `key=value`
      if (policy == UnknownOptions::kRefuse)
        return Unknown(scheduler, opts, fmt::format("{}: `{}`", source.where, pair), pair);
    }
  } else if (!source.text.empty()) {
    nlohmann::json j = nlohmann::json::parse(source.text, nullptr, false);
    if (!j.is_object())
      return InvalidArgumentError(fmt::format("{}: must be an object of scheduler options", source.where));
    nlohmann::json known = nlohmann::json::object();
    for (const auto& [key, value] : j.items()) {
      if (opts.Get(key)) {
        known[key] = value;
      } else if (policy == UnknownOptions::kRefuse) {
        return Unknown(scheduler, opts, fmt::format("{}.{}", source.where, key), key);
      } else {
        unknown.push_back(key);
      }
    }
    auto parsed = opts.CfgFromJson(known.dump());
    if (!parsed) return parsed.error().WithContext(source.where);
    cfg = std::move(*parsed);
  }
  if (warnings) {
    for (const std::string& key : unknown) {
      warnings->push_back(fmt::format("unknown run option for scheduler {} ignored: {} (see `torchx runopts {}`)",
                                      scheduler, key, scheduler));
    }
  }
  return cfg;
}

}  // namespace

Result<specs::Cfg> ResolveRunCfg(std::string_view scheduler, const specs::RunOpts& opts,
                                 const std::vector<CfgSource>& sources, const TorchxConfig& config,
                                 UnknownOptions unknown, std::vector<std::string>* warnings) {
  specs::Cfg cfg;
  for (const CfgSource& source : sources) {  // highest first: a key already set stays
    TORCHX_ASSIGN_OR_RETURN(specs::Cfg more, FromSource(scheduler, opts, source, unknown, warnings));
    for (auto& [key, value] : more) cfg.try_emplace(key, std::move(value));
  }
  std::vector<std::string> file_unknown;
  TORCHX_RETURN_IF_ERROR(config.ApplySchedulerDefaults(scheduler, opts, cfg, &file_unknown));
  if (warnings) {
    for (const std::string& u : file_unknown) {
      warnings->push_back(fmt::format("unknown run option for scheduler {} ignored: {} (see `torchx runopts {}`)",
                                      scheduler, u, scheduler));
    }
  }
  return cfg;
}

}  // namespace torchx::config
