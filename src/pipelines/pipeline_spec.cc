// Reading a pipeline file: its fields, each step's, and the dependency graph (unknown steps and
// cycles are caught here, before any component is built).
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/file_text.h"
#include "core/spelling.h"
#include "specs/yaml_reader.h"
#include "torchx/managed/managed.h"
#include "torchx/pipelines/pipeline.h"
#include "torchx/specs/serialize.h"

namespace torchx::pipelines {
namespace {

using OrderedJson = nlohmann::ordered_json;

const std::vector<std::string> kPipelineKeys = {"name", "scheduler", "cfg", "steps"};
const std::vector<std::string> kStepKeys = {"component", "args", "app", "depends_on", "scheduler", "cfg", "managed"};

Status UnknownKey(const std::string& where, const std::string& key, const std::vector<std::string>& valid) {
  return InvalidArgumentError(fmt::format("{}: unknown field `{}`; valid fields: {}.{}", where, key,
                                          fmt::join(valid, ", "), internal::SuggestionSuffix(key, valid)));
}

Status CheckKeys(const OrderedJson& obj, const std::string& where, const std::vector<std::string>& valid) {
  for (const auto& [key, _] : obj.items()) {
    if (std::find(valid.begin(), valid.end(), key) == valid.end()) return UnknownKey(where, key, valid);
  }
  return OkStatus();
}

Result<std::string> StringField(const OrderedJson& obj, const char* key, const std::string& where) {
  if (!obj.contains(key) || obj[key].is_null()) return std::string();
  if (!obj[key].is_string()) return InvalidArgumentError(fmt::format("{}.{}: must be a string", where, key));
  return obj[key].get<std::string>();
}

// An argument as the command line would give it: numbers and booleans as the file spells them.
Result<std::string> ArgText(const OrderedJson& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return InvalidArgumentError(fmt::format("{}: must be a string, number or boolean", where));
}

Result<std::string> CfgObject(const OrderedJson& obj, const std::string& where) {
  if (!obj.contains("cfg") || obj["cfg"].is_null()) return std::string("{}");
  if (!obj["cfg"].is_object()) {
    return InvalidArgumentError(fmt::format("{}.cfg: must be a mapping of scheduler options", where));
  }
  return obj["cfg"].dump();
}

// A step name is part of role names, log file names and handles.
bool IsStepName(const std::string& s) {
  if (s.empty() || s.size() > 63 || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

Result<StepSpec> ParseStep(const std::string& name, const OrderedJson& j, const std::string& where) {
  if (!IsStepName(name)) {
    return InvalidArgumentError(
        fmt::format("{}: step name `{}` must start with a letter or digit and hold only letters, digits, `-` and `_` "
                    "(at most 63)",
                    where, name));
  }
  if (!j.is_object()) {
    return InvalidArgumentError(fmt::format("{}: must be a mapping with `component` (and `args`) or `app`", where));
  }
  TORCHX_RETURN_IF_ERROR(CheckKeys(j, where, kStepKeys));
  StepSpec s;
  s.name = name;
  TORCHX_ASSIGN_OR_RETURN(s.component, StringField(j, "component", where));
  TORCHX_ASSIGN_OR_RETURN(s.scheduler, StringField(j, "scheduler", where));
  TORCHX_ASSIGN_OR_RETURN(s.cfg_json, CfgObject(j, where));
  bool has_app = j.contains("app") && !j["app"].is_null();
  if (has_app == !s.component.empty()) {
    return InvalidArgumentError(fmt::format("{}: give exactly one of `component` (with `args`) and `app`", where));
  }
  if (j.contains("args") && !j["args"].is_null()) {
    if (has_app) return InvalidArgumentError(fmt::format("{}.args: only a `component` takes `args`", where));
    if (!j["args"].is_array()) {
      return InvalidArgumentError(fmt::format("{}.args: must be a list of the component's arguments", where));
    }
    for (size_t i = 0; i < j["args"].size(); ++i) {
      TORCHX_ASSIGN_OR_RETURN(std::string a, ArgText(j["args"][i], fmt::format("{}.args[{}]", where, i)));
      s.args.push_back(std::move(a));
    }
  }
  if (has_app) {
    auto app = specs::AppDefFromJson(j["app"].dump());
    if (!app) return app.error().WithContext(where + ".app");
    s.app = std::move(*app);
  }
  if (j.contains("managed")) {  // `managed:` alone takes every default
    auto policy = managed::ParseChildPolicy(j["managed"].dump(), where + ".managed");
    if (!policy) return policy.error();
    s.managed_json = managed::ChildPolicyToJson(*policy);
  }
  if (j.contains("depends_on") && !j["depends_on"].is_null()) {
    const OrderedJson& d = j["depends_on"];
    if (d.is_string()) {
      s.depends_on.push_back(d.get<std::string>());
    } else if (d.is_array()) {
      for (size_t i = 0; i < d.size(); ++i) {
        if (!d[i].is_string()) {
          return InvalidArgumentError(fmt::format("{}.depends_on[{}]: must be a step name", where, i));
        }
        s.depends_on.push_back(d[i].get<std::string>());
      }
    } else {
      return InvalidArgumentError(fmt::format("{}.depends_on: must be a step name or a list of them", where));
    }
  }
  return s;
}

// Orders the steps so each follows its dependencies (file order otherwise), or names a cycle.
Status OrderSteps(std::vector<StepSpec>& steps) {
  std::map<std::string, size_t> index;
  std::vector<std::string> names;
  for (size_t i = 0; i < steps.size(); ++i) {
    index[steps[i].name] = i;
    names.push_back(steps[i].name);
  }
  for (const StepSpec& s : steps) {
    std::set<std::string> seen;
    for (size_t i = 0; i < s.depends_on.size(); ++i) {
      const std::string& d = s.depends_on[i];
      std::string where = fmt::format("steps.{}.depends_on[{}]", s.name, i);
      if (!index.count(d)) {
        return InvalidArgumentError(fmt::format("{}: unknown step `{}`; steps: {}.{}", where, d, fmt::join(names, ", "),
                                                internal::SuggestionSuffix(d, names)));
      }
      if (d == s.name) return InvalidArgumentError(fmt::format("{}: step `{}` depends on itself", where, d));
      if (!seen.insert(d).second) return InvalidArgumentError(fmt::format("{}: `{}` is listed twice", where, d));
    }
  }
  // Depth-first, in file order: a step is placed after everything it depends on.
  enum Mark { kNone, kActive, kDone };
  std::vector<Mark> mark(steps.size(), kNone);
  std::vector<size_t> order, path;
  std::function<Status(size_t)> visit = [&](size_t i) -> Status {
    if (mark[i] == kDone) return OkStatus();
    if (mark[i] == kActive) {
      auto start = std::find(path.begin(), path.end(), i);
      std::vector<std::string> cycle;
      for (auto it = start; it != path.end(); ++it) cycle.push_back(steps[*it].name);
      cycle.push_back(steps[i].name);
      return InvalidArgumentError(fmt::format("steps: dependency cycle {} (in depends_on)", fmt::join(cycle, " -> ")));
    }
    mark[i] = kActive;
    path.push_back(i);
    for (const std::string& d : steps[i].depends_on) TORCHX_RETURN_IF_ERROR(visit(index[d]));
    path.pop_back();
    mark[i] = kDone;
    order.push_back(i);
    return OkStatus();
  };
  for (size_t i = 0; i < steps.size(); ++i) TORCHX_RETURN_IF_ERROR(visit(i));
  std::vector<StepSpec> sorted;
  for (size_t i : order) sorted.push_back(std::move(steps[i]));
  steps = std::move(sorted);
  return OkStatus();
}

}  // namespace

Result<PipelineSpec> ParsePipeline(std::string_view text, const std::string& origin) {
  TORCHX_ASSIGN_OR_RETURN(
      const OrderedJson j,
      specs::internal::YamlMappingFromText(text, origin, "with `steps` (and optionally `name`, `scheduler`, `cfg`)"));
  auto in = [&origin](Status s) { return s.WithContext(origin); };
  if (Status s = CheckKeys(j, "pipeline", kPipelineKeys); !s.ok()) return in(s);
  PipelineSpec p;
  auto name = StringField(j, "name", "pipeline");
  if (!name) return in(name.error());
  p.name = *name;
  auto scheduler = StringField(j, "scheduler", "pipeline");
  if (!scheduler) return in(scheduler.error());
  p.scheduler = *scheduler;
  auto cfg = CfgObject(j, "pipeline");
  if (!cfg) return in(cfg.error());
  p.cfg_json = *cfg;
  if (!j.contains("steps") || !j["steps"].is_object() || j["steps"].empty()) {
    return in(InvalidArgumentError("steps: must be a mapping of step names to steps, with at least one step"));
  }
  for (const auto& [step_name, body] : j["steps"].items()) {
    auto step = ParseStep(step_name, body, "steps." + step_name);
    if (!step) return in(step.error());
    p.steps.push_back(std::move(*step));
  }
  if (Status s = OrderSteps(p.steps); !s.ok()) return in(s);
  return p;
}

Result<PipelineSpec> LoadPipelineFile(const std::string& path) {
  TORCHX_ASSIGN_OR_RETURN(std::string text, internal::ReadInputFile(path, "pipeline file"));
  return ParsePipeline(text, path);
}

}  // namespace torchx::pipelines
