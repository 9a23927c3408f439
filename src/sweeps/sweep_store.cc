#include "sweeps/sweep_store.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "composite/record_codec_impl.h"
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
      p.values.reserve(body.size());
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

Result<std::string> SweepDocument(const SweepSpec& spec) {
  std::set<std::string> names;
  for (const ParamSpec& p : spec.space.params) {
    if (!names.insert(p.name).second) {
      return InvalidArgumentError(
          fmt::format("space.parameters.{}: given twice (each parameter once: -p {}=a,b,...)", p.name, p.name));
    }
  }
  Json doc = Json::object();
  if (!spec.name.empty()) doc["name"] = spec.name;
  doc["component"] = spec.component;
  doc["args"] = spec.args;
  if (!spec.scheduler.empty()) doc["scheduler"] = spec.scheduler;
  if (spec.objective) {
    doc["objective"] = {{"metric", spec.objective->metric},
                        {"direction", spec.objective->minimize ? "minimize" : "maximize"},
                        {"reduce", spec.objective->best ? "best" : "last"}};
  }
  doc["space"] = SpaceJson(spec.space);
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace);  // bytes that are not UTF-8: U+FFFD
}

// What a sweep's record holds besides the shared header and child fields.
struct SweepParts {
  static constexpr std::string_view kNoun = "sweep";
  static constexpr const char* kChildrenKey = "trials";

  static void WriteOwn(const SweepRecord& r, Json& j) {
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
    if (!r.managed_json.empty()) j["managed"] = Json::parse(r.managed_json);
  }

  static Status ReadOwn(const Json& j, SweepRecord& r) {
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
    return OkStatus();
  }

  // What a trial has not got yet (metrics, an objective, Ax's fields) is left out: 10,000 trials
  // waiting are 10,000 short lines.
  static void WriteChildJson(const TrialRecord& t, Json& j) {
    j["index"] = t.index;
    j["values"] = AssignmentToJson(t.values);
    composite::WriteChild(t, j);
    if (!t.metrics.empty()) {
      Json metrics = Json::object();
      for (const auto& [k, v] : t.metrics) metrics[k] = v;
      j["metrics"] = std::move(metrics);
    }
    if (t.objective) j["objective"] = *t.objective;
    if (!t.generator.empty()) j["generator"] = t.generator;
    if (t.ax_index != -1) j["ax_index"] = t.ax_index;
  }

  static Status ReadChildJson(const Json& t, TrialRecord& tr, const SweepRecord&) {
    tr.index = t.at("index").get<int>();
    for (const auto& [k, v] : t.at("values").items()) tr.values.emplace_back(k, internal::ValueFromJson(v));
    TORCHX_RETURN_IF_ERROR(composite::ReadChild(t, "sweep", tr));
    if (auto m = t.find("metrics"); m != t.end()) {
      for (const auto& [k, v] : m->items()) tr.metrics.emplace_back(k, v.get<double>());
    }
    tr.objective = composite::NumberAt(t, "objective");
    tr.generator = t.value("generator", "");
    tr.ax_index = t.value("ax_index", -1);
    return OkStatus();
  }
};

}  // namespace torchx::sweeps

template struct torchx::composite::CodecOf<torchx::sweeps::SweepRecord, torchx::sweeps::TrialRecord,
                                           &torchx::sweeps::SweepRecord::trials, torchx::sweeps::SweepParts>;
