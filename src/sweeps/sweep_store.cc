#include "sweeps/sweep_store.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "composite/record_json.h"
#include "core/value_json.h"

namespace torchx::sweeps {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kKindNames[] = {"values", "uniform", "loguniform", "randint"};

Json AssignmentToJson(const Assignment& a) {
  Json j = Json::object();
  for (const auto& [k, v] : a) j[k] = internal::ValueToJson<Json>(v);
  return j;
}

Json ParamToJson(const ParamSpec& p) {
  if (p.kind == ParamSpec::Kind::kValues) {
    Json values = Json::array();
    for (const Value& v : p.values) values.push_back(internal::ValueToJson<Json>(v));
    return values;
  }
  return {{"distribution", kKindNames[static_cast<int>(p.kind)]}, {"low", p.low}, {"high", p.high}};
}

Json SpaceJson(const Space& s) {
  Json params = Json::object();
  for (const ParamSpec& p : s.params) params[p.name] = ParamToJson(p);
  Json j = {{"type", s.type == SpaceType::kRandom ? "random" : s.type == SpaceType::kAx ? "ax" : "grid"}};
  if (s.type != SpaceType::kGrid) {
    j["seed"] = s.seed;
    j["trials"] = s.trials;
  }
  j["parameters"] = std::move(params);
  return j;
}

Result<Space> SpaceFromJson(const Json& j) {
  Space s;
  std::string type = j.at("type").get<std::string>();
  s.type = type == "random" ? SpaceType::kRandom : type == "ax" ? SpaceType::kAx : SpaceType::kGrid;
  if (s.type != SpaceType::kGrid) {
    s.seed = j.at("seed").get<std::uint64_t>();
    s.trials = j.at("trials").get<int>();
  }
  for (const auto& [name, body] : j.at("parameters").items()) {
    ParamSpec p;
    p.name = name;
    if (body.is_array()) {
      for (const Json& v : body) p.values.push_back(internal::ValueFromJson(v));
    } else {
      std::string kind = body.at("distribution").get<std::string>();
      for (int i = 1; i < 4; ++i) {
        if (kind == kKindNames[i]) p.kind = static_cast<ParamSpec::Kind>(i);
      }
      p.low = body.at("low").get<double>();
      p.high = body.at("high").get<double>();
    }
    s.params.push_back(std::move(p));
  }
  return s;
}

}  // namespace

std::string SweepsDir(const std::string& state_dir) { return (std::filesystem::path(state_dir) / "sweeps").string(); }

std::string SpaceToJson(const Space& space) { return SpaceJson(space).dump(); }

std::string SweepRecordToJson(const SweepRecord& r) {
  return composite::WriteRecord(r, [&r](Json& j) {
    Json defaults = Json::array();
    for (const auto& [k, v] : r.component_defaults) defaults.push_back({k, v});
    Json trackers = Json::array();
    for (const auto& [name, config] : r.trackers) trackers.push_back({name, config ? Json(*config) : Json(nullptr)});
    Json objective = nullptr;
    if (r.objective) {
      objective = {{"metric", r.objective->metric},
                   {"direction", r.objective->minimize ? "minimize" : "maximize"},
                   {"reduce", r.objective->best ? "best" : "last"}};
    }
    j["scheduler"] = r.scheduler;
    j["cfg"] = Json::parse(r.cfg_json);
    j["component"] = r.component;
    j["args"] = r.args;
    j["app"] = r.app_json.empty() ? Json(nullptr) : Json::parse(r.app_json);
    j["component_defaults"] = std::move(defaults);
    j["trackers"] = std::move(trackers);
    j["space"] = SpaceJson(r.space);
    j["max_parallel"] = r.max_parallel;
    j["max_failures"] = r.max_failures;
    j["objective"] = std::move(objective);
    j["results_dir"] = r.results_dir;
    j["array_job"] = r.array_job;
    j["ax_short_at"] = r.ax_short_at;
    if (!r.managed_json.empty()) j["managed"] = composite::RecordJson::parse(r.managed_json);
    Json trials = Json::array();
    for (const TrialRecord& t : r.trials) {
      Json metrics = Json::object();
      for (const auto& [k, v] : t.metrics) metrics[k] = v;
      Json trial = {{"index", t.index}, {"values", AssignmentToJson(t.values)}};
      composite::WriteChild(t, trial);
      trial["metrics"] = std::move(metrics);
      trial["objective"] = composite::OptionalNumber(t.objective);
      trial["generator"] = t.generator;
      trial["ax_index"] = t.ax_index;
      trials.push_back(std::move(trial));
    }
    j["trials"] = std::move(trials);
  });
}

Result<SweepRecord> SweepRecordFromJson(const std::string& text) {
  SweepRecord r;
  TORCHX_RETURN_IF_ERROR(composite::ReadRecord(text, "sweep", r, [&r](const Json& j) -> Status {
    r.scheduler = j.at("scheduler").get<std::string>();
    r.cfg_json = j.at("cfg").dump();
    r.component = j.at("component").get<std::string>();
    r.args = j.at("args").get<std::vector<std::string>>();
    if (!j.at("app").is_null()) r.app_json = j["app"].dump();
    for (const Json& d : j.at("component_defaults")) r.component_defaults.emplace_back(d.at(0), d.at(1));
    for (const Json& t : j.at("trackers")) {
      r.trackers.emplace_back(t.at(0).get<std::string>(),
                              t.at(1).is_null() ? std::nullopt : std::optional(t.at(1).get<std::string>()));
    }
    TORCHX_ASSIGN_OR_RETURN(r.space, SpaceFromJson(j.at("space")));
    r.max_parallel = j.at("max_parallel").get<int>();
    r.max_failures = j.at("max_failures").get<int>();
    if (!j.at("objective").is_null()) {
      const Json& o = j["objective"];
      r.objective = Objective{o.at("metric").get<std::string>(), o.at("direction").get<std::string>() != "maximize",
                              o.at("reduce").get<std::string>() == "best"};
    }
    r.results_dir = j.at("results_dir").get<std::string>();
    r.array_job = j.value("array_job", "");
    r.ax_short_at = j.value("ax_short_at", -1);
    if (j.contains("managed")) r.managed_json = j.at("managed").dump();
    const Json& trials = j.at("trials");
    r.trials.reserve(trials.size());
    for (const Json& t : trials) {
      TrialRecord tr;
      tr.index = t.at("index").get<int>();
      for (const auto& [k, v] : t.at("values").items()) tr.values.emplace_back(k, internal::ValueFromJson(v));
      TORCHX_RETURN_IF_ERROR(composite::ReadChild(t, "sweep", tr));
      for (const auto& [k, v] : t.at("metrics").items()) tr.metrics.emplace_back(k, v.get<double>());
      tr.objective = composite::NumberAt(t, "objective");
      tr.generator = t.value("generator", "");
      tr.ax_index = t.value("ax_index", -1);
      r.trials.push_back(std::move(tr));
    }
    return OkStatus();
  }));
  return r;
}

}  // namespace torchx::sweeps
