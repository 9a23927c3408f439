#include "torchx/components/component_json.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/value_json.h"

namespace torchx::components {
namespace {

using Json = nlohmann::json;

Json ToJson(const Value& v) { return internal::ValueToJson<Json>(v); }
Value FromJson(const Json& j) { return internal::ValueFromJson(j); }

Status Bad(std::string_view path, std::string_view what) {
  return InvalidArgumentError(fmt::format("component spec JSON: {}: {}", path, what));
}

Result<std::string> Str(const Json& j, const std::string& path, const char* key, bool required) {
  if (!j.contains(key)) {
    if (required) return Bad(path + key, "missing");
    return std::string();
  }
  if (!j[key].is_string()) return Bad(path + key, "expected a string");
  return j[key].get<std::string>();
}

}  // namespace

std::string ComponentSpecToJson(const ComponentSpec& spec) {
  Json params = Json::array();
  for (const Param& p : spec.params) {
    params.push_back({{"name", p.name},
                      {"type", ParamTypeName(p.type)},
                      {"optional", p.optional},
                      {"required", !p.default_value.has_value()},
                      {"default", p.default_value ? ToJson(*p.default_value) : Json(nullptr)},
                      {"help", p.help}});
  }
  Json varargs = spec.varargs ? Json{{"name", spec.varargs->name}, {"help", spec.varargs->help}} : Json(nullptr);
  Json out = {{"name", spec.name},
              {"summary", spec.summary},
              {"description", spec.description},
              {"params", std::move(params)},
              {"varargs", std::move(varargs)}};
  if (!spec.deprecation.empty()) out["deprecation"] = spec.deprecation;
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<ComponentSpec> ComponentSpecFromJson(std::string_view text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Bad("(root)", "expected a JSON object");
  ComponentSpec spec;
  TORCHX_ASSIGN_OR_RETURN(spec.name, Str(j, "", "name", true));
  TORCHX_ASSIGN_OR_RETURN(spec.summary, Str(j, "", "summary", false));
  TORCHX_ASSIGN_OR_RETURN(spec.description, Str(j, "", "description", false));
  TORCHX_ASSIGN_OR_RETURN(spec.deprecation, Str(j, "", "deprecation", false));
  if (j.contains("params")) {
    if (!j["params"].is_array()) return Bad("params", "expected a list");
    for (size_t i = 0; i < j["params"].size(); ++i) {
      const Json& pj = j["params"][i];
      std::string path = fmt::format("params[{}].", i);
      if (!pj.is_object()) return Bad(path, "expected an object");
      Param p;
      TORCHX_ASSIGN_OR_RETURN(p.name, Str(pj, path, "name", true));
      TORCHX_ASSIGN_OR_RETURN(std::string type, Str(pj, path, "type", true));
      auto t = ParseParamType(type);
      if (!t) return t.error().WithContext(fmt::format("component spec JSON: {}type", path));
      p.type = *t;
      TORCHX_ASSIGN_OR_RETURN(p.help, Str(pj, path, "help", false));
      p.optional = pj.value("optional", false);
      if (!pj.value("required", false)) p.default_value = FromJson(pj.value("default", Json(nullptr)));
      spec.params.push_back(std::move(p));
    }
  }
  if (j.contains("varargs") && !j["varargs"].is_null()) {
    const Json& vj = j["varargs"];
    if (!vj.is_object()) return Bad("varargs", "expected an object or null");
    Param v;
    TORCHX_ASSIGN_OR_RETURN(v.name, Str(vj, "varargs.", "name", true));
    TORCHX_ASSIGN_OR_RETURN(v.help, Str(vj, "varargs.", "help", false));
    v.type = ParamType::kListStr;
    spec.varargs = std::move(v);
  }
  return spec;
}

std::string ComponentArgsToJson(const ComponentArgs& args) {
  Json values = Json::object();
  for (const auto& [k, v] : args.values) values[k] = ToJson(v);
  Json out = {{"values", std::move(values)}, {"varargs", args.varargs}};
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace torchx::components
