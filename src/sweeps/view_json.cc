// `torchx sweep status --json` / `sweep best --json`: the trials table for scripts; and a sweep
// as the file that runs it (`torchx describe`).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_yaml.h"
#include "core/state_dir.h"
#include "core/value_json.h"
#include "sweeps/sweep_store.h"
#include "torchx/specs/app_handle.h"
#include "torchx/sweeps/sweep.h"

namespace torchx::sweeps {

std::string SweepViewToJson(const SweepView& v) {
  using Json = nlohmann::ordered_json;
  auto opt = [](const std::optional<double>& x) { return x ? Json(*x) : Json(nullptr); };
  Json trials = Json::array();
  for (const TrialRow& t : v.trials) {
    Json values = Json::object();
    for (const auto& [k, x] : t.values) values[k] = internal::ValueToJson<Json>(x);
    Json metrics = Json::object();
    for (const auto& [k, x] : t.metrics) metrics[k] = x;
    trials.push_back({{"index", t.index},
                      {"values", std::move(values)},
                      {"state", std::string(specs::AppStateName(t.state))},
                      {"handle", t.handle},
                      {"msg", t.msg},
                      {"submitted", opt(t.submitted)},
                      {"ended", opt(t.ended)},
                      {"duration", t.submitted && t.ended ? Json(*t.ended - *t.submitted) : Json(nullptr)},
                      {"metrics", std::move(metrics)},
                      {"objective", opt(t.objective)},
                      {"generator", t.generator},
                      {"stderr_tail", t.stderr_tail}});
  }
  Json objective = nullptr;
  if (v.objective) {
    objective = {{"metric", v.objective->metric},
                 {"direction", v.objective->minimize ? "minimize" : "maximize"},
                 {"reduce", v.objective->best ? "best" : "last"}};
  }
  Json j = {{"handle", v.handle},
            {"name", v.name},
            {"state", std::string(specs::AppStateName(v.state))},
            {"msg", v.msg},
            {"objective", std::move(objective)},
            {"best", v.best ? Json(*v.best) : Json(nullptr)},
            {"objective_unreported", v.objective_unreported ? Json(*v.objective_unreported) : Json(nullptr)},
            {"trials", std::move(trials)}};
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Result<std::string> SweepDefinition(const std::string& handle, bool json) {
  using Json = nlohmann::ordered_json;
  TORCHX_ASSIGN_OR_RETURN(specs::ParsedAppHandle parsed, specs::ParseAppHandle(handle));
  SweepStore store(SweepsDir(internal::DefaultStateDir()));
  TORCHX_ASSIGN_OR_RETURN(auto record, store.Get(parsed.app_id));
  if (!record) return NotFoundError(fmt::format("sweep {} does not exist", handle));
  const SweepRecord& r = *record;
  Json def = {{"name", r.name}};
  if (!r.component.empty()) {
    def["component"] = r.component;
    def["args"] = r.args;
  } else {
    def["app"] = Json::parse(r.app_json);
  }
  def["scheduler"] = r.scheduler;
  Json cfg = Json::parse(r.cfg_json);
  if (!cfg.empty()) def["cfg"] = std::move(cfg);
  if (r.max_parallel > 0) def["max_parallel"] = r.max_parallel;
  if (r.max_failures > 0) def["max_failures"] = r.max_failures;
  if (r.objective) {
    def["objective"] = {{"metric", r.objective->metric},
                        {"direction", r.objective->minimize ? "minimize" : "maximize"},
                        {"reduce", r.objective->best ? "best" : "last"}};
  }
  def["space"] = Json::parse(SpaceToJson(r.space));
  if (!r.managed_json.empty()) def["managed"] = Json::parse(r.managed_json);  // a sweep file's block reads it
  if (json) return def.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  return internal::JsonToYaml(def);
}

}  // namespace torchx::sweeps
