// Reading a sweep: the file's fields, the search space (grid values, ranges, distributions), the
// objective, and the inline `-p name=...` form. Errors name the field.
#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/file_text.h"
#include "core/json_yaml.h"
#include "core/spelling.h"
#include "core/value_json.h"
#include "specs/yaml_reader.h"
#include "torchx/managed/managed.h"
#include "torchx/specs/serialize.h"
#include "torchx/sweeps/sweep.h"

namespace torchx::sweeps {
namespace {

using OrderedJson = nlohmann::ordered_json;
using Kind = ParamSpec::Kind;

const std::vector<std::string> kSweepKeys = {"name",         "component",    "args",      "app",   "scheduler", "cfg",
                                             "max_parallel", "max_failures", "objective", "space", "managed"};
const std::vector<std::string> kSpaceKeys = {"type", "parameters", "seed", "trials"};
const std::vector<std::string> kSpaceTypes = {"grid", "random", "ax"};
const std::vector<std::string> kObjectiveKeys = {"metric", "direction", "reduce"};
const std::vector<std::string> kGridForms = {"values", "range", "linspace", "logspace"};
const std::vector<std::string> kDistributions = {"uniform", "loguniform", "randint", "choice"};

Status CheckKeys(const OrderedJson& obj, const std::string& where, const std::vector<std::string>& valid) {
  for (const auto& [key, _] : obj.items()) {
    if (std::find(valid.begin(), valid.end(), key) == valid.end()) {
      return InvalidArgumentError(fmt::format("{}: unknown field `{}`; valid fields: {}.{}", where, key,
                                              fmt::join(valid, ", "), internal::SuggestionSuffix(key, valid)));
    }
  }
  return OkStatus();
}

Status BadChoice(const std::string& where, const std::string& got, const std::vector<std::string>& valid) {
  return InvalidArgumentError(fmt::format("{}: invalid value `{}`, must be one of [{}].{}", where, got,
                                          fmt::join(valid, ", "), internal::SuggestionSuffix(got, valid)));
}

Result<std::string> StringField(const OrderedJson& obj, const char* key, const std::string& where) {
  if (!obj.contains(key) || obj[key].is_null()) return std::string();
  if (!obj[key].is_string()) return InvalidArgumentError(fmt::format("{}.{}: must be a string", where, key));
  return obj[key].get<std::string>();
}

Result<int> CountField(const OrderedJson& obj, const char* key, const std::string& where, int min) {
  if (!obj.contains(key) || obj[key].is_null()) return 0;
  const OrderedJson& v = obj[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() < min || v.get<std::int64_t>() > 1000000) {
    return InvalidArgumentError(
        fmt::format("{}.{}: must be an integer from {} to 1000000, got {}", where, key, min, v.dump()));
  }
  return v.get<int>();
}

Result<double> Number(const OrderedJson& v, const std::string& where) {
  if (!v.is_number()) return InvalidArgumentError(fmt::format("{}: must be a number, got {}", where, v.dump()));
  return v.get<double>();
}

Result<Value> Scalar(const OrderedJson& v, const std::string& where) {
  if (v.is_string() || v.is_number() || v.is_boolean()) return internal::ValueFromJson(v);
  return InvalidArgumentError(fmt::format("{}: a value must be a string, number or boolean, got {}", where, v.dump()));
}

Result<std::vector<Value>> ValueList(const OrderedJson& v, const std::string& where) {
  if (!v.is_array() || v.empty()) return InvalidArgumentError(fmt::format("{}: must be a non-empty list", where));
  std::vector<Value> out;
  for (size_t i = 0; i < v.size(); ++i) {
    TORCHX_ASSIGN_OR_RETURN(Value x, Scalar(v[i], fmt::format("{}[{}]", where, i)));
    out.push_back(std::move(x));
  }
  return out;
}

// The widest randint a trial can draw exactly: its values are doubles on the way to the trial's
// arguments, which hold every integer up to 2^53.
constexpr double kMaxRandIntWidth = 9007199254740992.0;  // 2^53

Status CheckBounds(const ParamSpec& p, const std::string& where) {
  if (!std::isfinite(p.low) || !std::isfinite(p.high)) {
    return InvalidArgumentError(fmt::format("{}: low ({}) and high ({}) must be finite numbers", where, p.low, p.high));
  }
  if (!(p.low < p.high) && !(p.kind == Kind::kRandInt && p.low == p.high)) {
    return InvalidArgumentError(fmt::format("{}: low ({}) must be below high ({})", where, p.low, p.high));
  }
  if (p.kind == Kind::kLogUniform && p.low <= 0) {
    return InvalidArgumentError(fmt::format("{}.low: a loguniform distribution needs low > 0, got {}", where, p.low));
  }
  if (p.kind == Kind::kRandInt && (p.low != std::floor(p.low) || p.high != std::floor(p.high))) {
    return InvalidArgumentError(fmt::format("{}: randint bounds must be integers", where));
  }
  // In long double, exact for these magnitudes: high - low + 1 overflows no int64 and no double.
  long double width = static_cast<long double>(p.high) - static_cast<long double>(p.low) + 1.0L;
  if (p.kind == Kind::kRandInt && (std::fabs(p.low) > kMaxRandIntWidth || std::fabs(p.high) > kMaxRandIntWidth ||
                                   width > static_cast<long double>(kMaxRandIntWidth))) {
    return InvalidArgumentError(fmt::format(
        "{}: randint({:.0f}, {:.0f}) is wider than 2^53 values (or its bounds beyond +-2^53): no trial could draw "
        "each value exactly",
        where, p.low, p.high));
  }
  if (p.kind != Kind::kRandInt && !std::isfinite(p.high - p.low)) {
    return InvalidArgumentError(
        fmt::format("{}: the width high - low ({} - {}) is not a finite number", where, p.high, p.low));
  }
  return OkStatus();
}

// Evenly spaced points from low to high, both included; geometric when `log`.
Result<std::vector<Value>> Spaced(const OrderedJson& v, const std::string& where, bool log) {
  if (!v.is_array() || v.size() != 3 || !v[2].is_number_integer() || v[2].get<std::int64_t>() < 1) {
    return InvalidArgumentError(fmt::format("{}: must be [low, high, count] with count >= 1", where));
  }
  TORCHX_ASSIGN_OR_RETURN(double lo, Number(v[0], where + "[0]"));
  TORCHX_ASSIGN_OR_RETURN(double hi, Number(v[1], where + "[1]"));
  if (log && (lo <= 0 || hi <= 0)) return InvalidArgumentError(fmt::format("{}: logspace bounds must be > 0", where));
  auto n = v[2].get<std::int64_t>();
  if (static_cast<std::uint64_t>(n) > kMaxTrials) {
    return InvalidArgumentError(fmt::format("{}[2]: at most {} points", where, kMaxTrials));
  }
  std::vector<Value> out;
  for (std::int64_t i = 0; i < n; ++i) {
    double t = n == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(n - 1);
    out.emplace_back(log ? std::exp(std::log(lo) + t * (std::log(hi) - std::log(lo))) : lo + t * (hi - lo));
  }
  return out;
}

// Python's range(start, stop[, step]).
Result<std::vector<Value>> Range(const OrderedJson& v, const std::string& where) {
  bool ok = v.is_array() && (v.size() == 2 || v.size() == 3);
  for (size_t i = 0; ok && i < v.size(); ++i) ok = v[i].is_number_integer();
  if (!ok)
    return InvalidArgumentError(fmt::format("{}: must be [start, stop] or [start, stop, step], integers", where));
  auto start = v[0].get<std::int64_t>(), stop = v[1].get<std::int64_t>();
  std::int64_t step = v.size() == 3 ? v[2].get<std::int64_t>() : 1;
  if (step == 0) return InvalidArgumentError(fmt::format("{}[2]: step must not be 0", where));
  std::vector<Value> out;
  for (std::int64_t x = start; step > 0 ? x < stop : x > stop; x += step) {
    if (out.size() >= kMaxTrials)
      return InvalidArgumentError(fmt::format("{}: more than {} values", where, kMaxTrials));
    out.emplace_back(x);
  }
  if (out.empty()) return InvalidArgumentError(fmt::format("{}: the range is empty", where));
  return out;
}

Result<ParamSpec> ParseParam(const std::string& name, const OrderedJson& v, SpaceType type, const std::string& where) {
  ParamSpec p;
  p.name = name;
  bool valid_name = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name) valid_name = valid_name && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!valid_name) {
    return InvalidArgumentError(
        fmt::format("{}: parameter name `{}` must be letters, digits and `_`, not starting with a digit", where, name));
  }
  if (v.is_array()) {
    TORCHX_ASSIGN_OR_RETURN(p.values, ValueList(v, where));
    return p;
  }
  if (!v.is_object()) {
    TORCHX_ASSIGN_OR_RETURN(Value x, Scalar(v, where));  // one value: fixed for every trial
    p.values.push_back(std::move(x));
    return p;
  }
  if (type == SpaceType::kGrid) {
    TORCHX_RETURN_IF_ERROR(CheckKeys(v, where, kGridForms));
    if (v.size() != 1) {
      return InvalidArgumentError(
          fmt::format("{}: give one of {} (or a list of values)", where, fmt::join(kGridForms, ", ")));
    }
    auto first = v.begin();
    const std::string& form = first.key();
    const OrderedJson& arg = first.value();
    std::string at = where + "." + form;
    if (form == "values") {
      TORCHX_ASSIGN_OR_RETURN(p.values, ValueList(arg, at));
    } else if (form == "range") {
      TORCHX_ASSIGN_OR_RETURN(p.values, Range(arg, at));
    } else {
      TORCHX_ASSIGN_OR_RETURN(p.values, Spaced(arg, at, form == "logspace"));
    }
    return p;
  }
  if (type == SpaceType::kAx && !v.contains("distribution")) {
    // Ax's ranges: {low, high[, type: int|float][, log_scale: true]}, or {values: [...]} (a choice).
    if (v.contains("values")) {
      TORCHX_RETURN_IF_ERROR(CheckKeys(v, where, {"values"}));
      TORCHX_ASSIGN_OR_RETURN(p.values, ValueList(v["values"], where + ".values"));
      return p;
    }
    TORCHX_RETURN_IF_ERROR(CheckKeys(v, where, {"low", "high", "type", "log_scale"}));
    for (const char* k : {"low", "high"}) {
      if (!v.contains(k))
        return InvalidArgumentError(fmt::format("{}.{}: required (an Ax range is {{low, high}})", where, k));
    }
    TORCHX_ASSIGN_OR_RETURN(p.low, Number(v["low"], where + ".low"));
    TORCHX_ASSIGN_OR_RETURN(p.high, Number(v["high"], where + ".high"));
    TORCHX_ASSIGN_OR_RETURN(std::string kind, StringField(v, "type", where));
    if (kind.empty()) kind = v["low"].is_number_integer() && v["high"].is_number_integer() ? "int" : "float";
    if (kind != "int" && kind != "float") return BadChoice(where + ".type", kind, {"float", "int"});
    if (v.contains("log_scale") && !v["log_scale"].is_boolean()) {
      return InvalidArgumentError(
          fmt::format("{}.log_scale: must be true or false, got {}", where, v["log_scale"].dump()));
    }
    bool log = v.contains("log_scale") && v["log_scale"].get<bool>();
    p.kind = kind == "int" ? Kind::kRandInt : log ? Kind::kLogUniform : Kind::kUniform;
    if (log && kind == "int")
      return InvalidArgumentError(fmt::format("{}.log_scale: only a float range has one", where));
    TORCHX_RETURN_IF_ERROR(CheckBounds(p, where));
    return p;
  }
  TORCHX_ASSIGN_OR_RETURN(std::string dist, StringField(v, "distribution", where));
  if (dist.empty()) {
    return InvalidArgumentError(fmt::format("{}.distribution: required, one of [{}] (or give a list of values)", where,
                                            fmt::join(kDistributions, ", ")));
  }
  if (dist == "choice") {
    TORCHX_RETURN_IF_ERROR(CheckKeys(v, where, {"distribution", "values"}));
    if (!v.contains("values")) return InvalidArgumentError(fmt::format("{}.values: required for `choice`", where));
    TORCHX_ASSIGN_OR_RETURN(p.values, ValueList(v["values"], where + ".values"));
    return p;
  }
  if (dist == "uniform") {
    p.kind = Kind::kUniform;
  } else if (dist == "loguniform") {
    p.kind = Kind::kLogUniform;
  } else if (dist == "randint") {
    p.kind = Kind::kRandInt;
  } else {
    return BadChoice(where + ".distribution", dist, kDistributions);
  }
  TORCHX_RETURN_IF_ERROR(CheckKeys(v, where, {"distribution", "low", "high"}));
  for (const char* k : {"low", "high"}) {
    if (!v.contains(k)) return InvalidArgumentError(fmt::format("{}.{}: required for `{}`", where, k, dist));
  }
  TORCHX_ASSIGN_OR_RETURN(p.low, Number(v["low"], where + ".low"));
  TORCHX_ASSIGN_OR_RETURN(p.high, Number(v["high"], where + ".high"));
  TORCHX_RETURN_IF_ERROR(CheckBounds(p, where));
  return p;
}

Result<Space> ParseSpace(const OrderedJson& j) {
  const std::string where = "space";
  if (!j.is_object()) return InvalidArgumentError("space: must be a mapping with `type` and `parameters`");
  TORCHX_RETURN_IF_ERROR(CheckKeys(j, where, kSpaceKeys));
  Space s;
  TORCHX_ASSIGN_OR_RETURN(std::string type, StringField(j, "type", where));
  if (type.empty()) type = "grid";
  if (type == "random") {
    s.type = SpaceType::kRandom;
  } else if (type == "ax") {
    s.type = SpaceType::kAx;
  } else if (type != "grid") {
    return BadChoice("space.type", type, kSpaceTypes);
  }
  if (s.type != SpaceType::kGrid) {
    TORCHX_ASSIGN_OR_RETURN(s.trials, CountField(j, "trials", where, 1));
    if (s.trials == 0) {
      return InvalidArgumentError(fmt::format("space.trials: required for {} search (how many trials)",
                                              s.type == SpaceType::kAx ? "an ax" : "a random"));
    }
    if (j.contains("seed") && !j["seed"].is_null()) {
      if (!j["seed"].is_number_integer() || j["seed"].get<std::int64_t>() < 0) {
        return InvalidArgumentError(
            fmt::format("space.seed: must be a non-negative integer, got {}", j["seed"].dump()));
      }
      s.seed = j["seed"].get<std::uint64_t>();
    }
  } else {
    for (const char* k : {"trials", "seed"}) {
      if (j.contains(k))
        return InvalidArgumentError(fmt::format("space.{}: only a random or ax search takes `{}`", k, k));
    }
  }
  if (!j.contains("parameters") || !j["parameters"].is_object() || j["parameters"].empty()) {
    return InvalidArgumentError("space.parameters: must be a mapping of parameter names to their values");
  }
  for (const auto& [name, body] : j["parameters"].items()) {
    TORCHX_ASSIGN_OR_RETURN(ParamSpec p, ParseParam(name, body, s.type, "space.parameters." + name));
    s.params.push_back(std::move(p));
  }
  if (TrialCount(s) > kMaxTrials) {
    return InvalidArgumentError(fmt::format("space: {} trials; a sweep runs at most {}", TrialCount(s), kMaxTrials));
  }
  return s;
}

Result<Objective> ParseObjective(const OrderedJson& j) {
  Objective o;
  if (j.is_string()) {
    o.metric = j.get<std::string>();
    if (o.metric.empty()) return InvalidArgumentError("objective: must name a reported metric, got an empty string");
    return o;
  }
  if (!j.is_object()) return InvalidArgumentError("objective: must be a metric name or a mapping with `metric`");
  TORCHX_RETURN_IF_ERROR(CheckKeys(j, "objective", kObjectiveKeys));
  TORCHX_ASSIGN_OR_RETURN(o.metric, StringField(j, "metric", "objective"));
  if (o.metric.empty()) return InvalidArgumentError("objective.metric: required (the reported metric to optimise)");
  TORCHX_ASSIGN_OR_RETURN(std::string direction, StringField(j, "direction", "objective"));
  if (direction == "maximize") {
    o.minimize = false;
  } else if (!direction.empty() && direction != "minimize") {
    return BadChoice("objective.direction", direction, {"minimize", "maximize"});
  }
  TORCHX_ASSIGN_OR_RETURN(std::string reduce, StringField(j, "reduce", "objective"));
  if (reduce == "best") {
    o.best = true;
  } else if (!reduce.empty() && reduce != "last") {
    return BadChoice("objective.reduce", reduce, {"last", "best"});
  }
  return o;
}

// An argument as the command line would give it: numbers and booleans as the file spells them.
Result<std::string> ArgText(const OrderedJson& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return InvalidArgumentError(fmt::format("{}: must be a string, number or boolean", where));
}

}  // namespace

Result<SweepSpec> ParseSweep(std::string_view text, const std::string& origin) {
  TORCHX_ASSIGN_OR_RETURN(const OrderedJson j, specs::internal::YamlMappingFromText(
                                                   text, origin, "with `component` (or `app`) and `space`"));
  auto in = [&origin](Status s) { return s.WithContext(origin); };
  auto run = [&]() -> Result<SweepSpec> {
    TORCHX_RETURN_IF_ERROR(CheckKeys(j, "sweep", kSweepKeys));
    SweepSpec s;
    TORCHX_ASSIGN_OR_RETURN(s.name, StringField(j, "name", "sweep"));
    TORCHX_ASSIGN_OR_RETURN(s.component, StringField(j, "component", "sweep"));
    TORCHX_ASSIGN_OR_RETURN(s.scheduler, StringField(j, "scheduler", "sweep"));
    if (j.contains("cfg") && !j["cfg"].is_null()) {
      if (!j["cfg"].is_object()) return InvalidArgumentError("cfg: must be a mapping of scheduler options");
      s.cfg_json = j["cfg"].dump();
    }
    bool has_app = j.contains("app") && !j["app"].is_null();
    if (has_app == !s.component.empty()) {
      return InvalidArgumentError("give exactly one of `component` (with `args`) and `app`");
    }
    if (j.contains("args") && !j["args"].is_null()) {
      if (has_app) return InvalidArgumentError("args: only a `component` takes `args`");
      if (!j["args"].is_array()) return InvalidArgumentError("args: must be a list of the component's arguments");
      for (size_t i = 0; i < j["args"].size(); ++i) {
        TORCHX_ASSIGN_OR_RETURN(std::string a, ArgText(j["args"][i], fmt::format("args[{}]", i)));
        s.args.push_back(std::move(a));
      }
    }
    if (has_app) {
      auto app = specs::AppDefFromJson(j["app"].dump());
      if (!app) return app.error().WithContext("app");
      s.app = std::move(*app);
    }
    TORCHX_ASSIGN_OR_RETURN(s.max_parallel, CountField(j, "max_parallel", "sweep", 1));
    TORCHX_ASSIGN_OR_RETURN(s.max_failures, CountField(j, "max_failures", "sweep", 1));
    if (j.contains("objective") && !j["objective"].is_null()) {
      TORCHX_ASSIGN_OR_RETURN(Objective o, ParseObjective(j["objective"]));
      s.objective = std::move(o);
    }
    if (j.contains("managed")) {  // `managed:` alone takes every default
      TORCHX_ASSIGN_OR_RETURN(managed::ChildPolicy policy, managed::ParseChildPolicy(j["managed"].dump(), "managed"));
      s.managed_json = managed::ChildPolicyToJson(policy);
    }
    if (!j.contains("space")) return InvalidArgumentError("space: required (`type` and `parameters`)");
    TORCHX_ASSIGN_OR_RETURN(s.space, ParseSpace(j["space"]));
    if (s.space.type == SpaceType::kAx && !s.objective) {
      return InvalidArgumentError("objective: required for an ax search (the reported metric Ax optimises)");
    }
    return s;
  };
  auto s = run();
  if (!s) return in(s.error());
  return s;
}

Result<SweepSpec> LoadSweepFile(const std::string& path) {
  TORCHX_ASSIGN_OR_RETURN(std::string text, internal::ReadInputFile(path, "sweep file"));
  return ParseSweep(text, path);
}

Result<ParamSpec> ParseInlineParam(std::string_view text) {
  size_t eq = text.find('=');
  std::string where = fmt::format("-p {}", text);
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return InvalidArgumentError(fmt::format("{}: must be name=v1,v2,... (grid) or name=DIST(a,b) with DIST one of [{}]",
                                            where, fmt::join(kDistributions, ", ")));
  }
  std::string name(text.substr(0, eq));
  std::string spec(text.substr(eq + 1));
  auto items = [](const std::string& list) {
    OrderedJson arr = OrderedJson::array();
    std::stringstream in(list);
    std::string item;
    while (std::getline(in, item, ',')) {
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      arr.push_back(OrderedJson(internal::YamlPlainScalar(item)));
    }
    return arr;
  };
  size_t open = spec.find('(');
  if (open != std::string::npos && spec.back() == ')') {
    std::string dist = spec.substr(0, open);
    OrderedJson args = items(spec.substr(open + 1, spec.size() - open - 2));
    OrderedJson body = {{"distribution", dist}};
    if (dist == "choice") {
      body["values"] = args;
    } else {
      if (args.size() != 2) return InvalidArgumentError(fmt::format("{}: {}(low,high) takes two bounds", where, dist));
      body["low"] = args[0];
      body["high"] = args[1];
    }
    return ParseParam(name, body, SpaceType::kRandom, where);
  }
  return ParseParam(name, items(spec), SpaceType::kGrid, where);
}

}  // namespace torchx::sweeps
