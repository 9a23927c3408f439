#include "torchx/components/declarative.h"

#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <re2/re2.h>

#include "components/function_component.h"
#include "core/pystr.h"
#include "core/spelling.h"
#include "specs/yaml_reader.h"

namespace torchx::components {
namespace {

using internal::FunctionComponent;

// `{{ name }}`: matched whole (FullMatch) or found within a scalar (RE2: linear time, no
// recursion, whatever the file holds).
const re2::RE2& Placeholder() {
  static const re2::RE2 re(R"(\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\})");
  return re;
}
// The parameter a scalar that is one placeholder names; nullopt for any other scalar.
std::optional<std::string> WholePlaceholder(const std::string& text) {
  std::string name;
  if (re2::RE2::FullMatch(text, Placeholder(), &name)) return name;
  return std::nullopt;
}

std::string ValueText(const Value& v) {
  if (v.is_null()) return "";
  if (v.is_bool()) return v.as_bool() ? "true" : "false";
  if (v.is_int()) return std::to_string(v.as_int());
  if (v.is_double()) return ::torchx::internal::PyFloatStr(v.as_double());
  if (v.is_string()) return v.as_string();
  std::string out;
  if (v.is_list()) {
    for (const Value& item : v.as_list()) out += (out.empty() ? "" : ",") + ValueText(item);
    return out;
  }
  for (const auto& [k, item] : v.as_map()) out += (out.empty() ? "" : ",") + k + "=" + ValueText(item);
  return out;
}

YAML::Node TypedNode(const Value& v) {
  if (v.is_null()) return YAML::Node(YAML::NodeType::Null);
  if (v.is_list()) {
    YAML::Node seq(YAML::NodeType::Sequence);
    for (const Value& item : v.as_list()) seq.push_back(TypedNode(item));
    return seq;
  }
  if (v.is_map()) {
    YAML::Node map(YAML::NodeType::Map);
    for (const auto& [k, item] : v.as_map()) map[k] = TypedNode(item);
    return map;
  }
  YAML::Node scalar(ValueText(v));
  if (v.is_string()) scalar.SetTag("!");  // keep text as text ("0.10" stays a string)
  return scalar;
}

using Bindings = std::map<std::string, Value>;

Status CheckName(const std::string& name, const Bindings& b, const std::string& where) {
  if (b.count(name)) return OkStatus();
  std::vector<std::string> names;
  for (const auto& [k, _] : b) names.push_back(k);
  return InvalidArgumentError(fmt::format("{}: unknown parameter `{{{{ {} }}}}`.{}", where, name,
                                          ::torchx::internal::SuggestionSuffix(name, names)));
}

// Returns the substituted node; `splice` is set when a sequence item expands to several items.
Result<YAML::Node> Substitute(const YAML::Node& n, const Bindings& b, const std::string& where) {
  if (n.IsScalar()) {
    const std::string& text = n.Scalar();
    if (auto whole = WholePlaceholder(text)) {
      TORCHX_RETURN_IF_ERROR(CheckName(*whole, b, where));
      return TypedNode(b.at(*whole));
    }
    std::string out;
    size_t last = 0;
    bool any = false;
    re2::StringPiece match[2];
    while (last <= text.size() && Placeholder().Match(text, last, text.size(), re2::RE2::UNANCHORED, match, 2)) {
      std::string name(match[1].data(), match[1].size());
      TORCHX_RETURN_IF_ERROR(CheckName(name, b, where));
      auto at = static_cast<size_t>(match[0].data() - text.data());
      out += text.substr(last, at - last) + ValueText(b.at(name));
      last = at + match[0].size();
      any = true;
    }
    if (!any) return YAML::Clone(n);
    out += text.substr(last);
    YAML::Node s(out);
    s.SetTag("!");
    return s;
  }
  if (n.IsSequence()) {
    YAML::Node seq(YAML::NodeType::Sequence);
    size_t i = 0;
    for (const auto& item : n) {
      std::string item_where = fmt::format("{}[{}]", where, i++);
      std::string text = item.IsScalar() ? item.Scalar() : "";
      std::optional<std::string> whole = item.IsScalar() ? WholePlaceholder(text) : std::nullopt;
      if (whole) {
        TORCHX_RETURN_IF_ERROR(CheckName(*whole, b, item_where));
        const Value& v = b.at(*whole);
        if (v.is_null()) continue;  // an unset optional drops the item
        if (v.is_list()) {
          for (const Value& x : v.as_list()) seq.push_back(TypedNode(x));
          continue;
        }
      }
      TORCHX_ASSIGN_OR_RETURN(YAML::Node sub, Substitute(item, b, item_where));
      seq.push_back(sub);
    }
    return seq;
  }
  if (n.IsMap()) {
    YAML::Node map(YAML::NodeType::Map);
    for (const auto& kv : n) {
      std::string key = kv.first.Scalar();
      TORCHX_ASSIGN_OR_RETURN(YAML::Node sub, Substitute(kv.second, b, where.empty() ? key : where + "." + key));
      map[key] = sub;
    }
    return map;
  }
  return YAML::Clone(n);
}

// The declared default, converted from YAML through the same decoding as the CLI.
Result<Value> DefaultFromYaml(const Param& p, const YAML::Node& n, const std::string& where) {
  if (n.IsNull()) return Value();
  ComponentSpec one{"x", "", "", {Param{p.name, p.type, p.optional, std::nullopt, ""}}, std::nullopt, ""};
  if (n.IsScalar()) {
    auto args = ParseComponentArgs(one, {"--" + p.name, n.Scalar()});
    if (!args) return InvalidArgumentError(fmt::format("{}: {}", where, args.error().message()));
    return args->values.at(p.name);
  }
  if (n.IsSequence() && p.type == ParamType::kListStr) {
    Value::List l;
    for (const auto& item : n) {
      if (!item.IsScalar()) return InvalidArgumentError(fmt::format("{}: list items must be scalars", where));
      l.emplace_back(item.Scalar());
    }
    return Value(std::move(l));
  }
  if (n.IsMap() && p.type == ParamType::kDictStr) {
    Value::Map m;
    for (const auto& kv : n) {
      if (!kv.second.IsScalar()) return InvalidArgumentError(fmt::format("{}: dict values must be scalars", where));
      m[kv.first.Scalar()] = Value(kv.second.Scalar());
    }
    return Value(std::move(m));
  }
  return InvalidArgumentError(fmt::format("{}: default does not match type {}", where, ParamTypeName(p.type)));
}

Status CheckKeys(const YAML::Node& n, const std::string& where, const std::vector<std::string>& valid) {
  if (!n.IsMap()) return InvalidArgumentError(fmt::format("{}: expected a mapping", where));
  for (const auto& kv : n) {
    std::string k = kv.first.Scalar();
    if (std::find(valid.begin(), valid.end(), k) == valid.end()) {
      return InvalidArgumentError(
          fmt::format("{}.{}: unknown field.{}", where, k, ::torchx::internal::SuggestionSuffix(k, valid)));
    }
  }
  return OkStatus();
}

Result<Param> ReadParam(const std::string& name, const YAML::Node& n, const std::string& where) {
  Param p;
  p.name = name;
  if (n.IsNull()) {  // `name:` alone: a required str
    return p;
  }
  TORCHX_RETURN_IF_ERROR(CheckKeys(n, where, {"type", "default", "help", "optional"}));
  if (n["type"]) {
    auto t = ParseParamType(n["type"].Scalar());
    if (!t) return t.error().WithContext(where);
    p.type = *t;
  }
  if (n["help"]) p.help = n["help"].Scalar();
  if (n["optional"]) {
    std::string o = n["optional"].Scalar();
    if (o != "true" && o != "false") {
      return InvalidArgumentError(fmt::format("{}.optional: must be true or false, got '{}'", where, o));
    }
    p.optional = o == "true";
  }
  if (n["default"]) {
    TORCHX_ASSIGN_OR_RETURN(Value v, DefaultFromYaml(p, n["default"], where + ".default"));
    if (v.is_null() && !p.optional) {
      return InvalidArgumentError(fmt::format("{}.default: null default needs `optional: true`", where));
    }
    p.default_value = std::move(v);
  } else if (p.optional) {
    p.default_value = Value();
  }
  return p;
}

}  // namespace

bool IsDeclarativeComponentFile(const std::string& path) {
  auto ends_with = [&](std::string_view ext) {
    return path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
  };
  if (!ends_with(".yaml") && !ends_with(".yml")) return false;
  try {
    YAML::Node root = YAML::LoadFile(path);
    return root.IsMap() && root["app"];
  } catch (const YAML::Exception&) {
    return false;
  }
}

Result<std::unique_ptr<Component>> ParseDeclarativeComponent(std::string_view yaml, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(fmt::format("{}: {}", origin, e.what()));
  }
  if (!root.IsMap()) return InvalidArgumentError(fmt::format("{}: expected a mapping with `app`", origin));
  TORCHX_RETURN_IF_ERROR(CheckKeys(root, origin, {"description", "params", "varargs", "app"}));
  if (!root["app"] || !root["app"].IsMap()) {
    return InvalidArgumentError(fmt::format("{}: app: missing; the AppDef template is required", origin));
  }
  ComponentSpec spec;
  spec.name = origin;
  std::string desc = root["description"] ? root["description"].Scalar() : "";
  size_t nl = desc.find('\n');
  spec.summary = desc.substr(0, nl);
  if (nl != std::string::npos) {
    spec.description = desc.substr(nl + 1);
    while (!spec.description.empty() && spec.description.back() == '\n') spec.description.pop_back();
  }
  if (spec.summary.empty()) spec.summary = fmt::format("Component from {}", origin);
  if (YAML::Node params = root["params"]) {
    if (!params.IsMap())
      return InvalidArgumentError(
          fmt::format("{}: params: expected a mapping of name: {{type, default, help}}", origin));
    for (const auto& kv : params) {
      std::string name = kv.first.Scalar();
      static const re2::RE2 kName("[A-Za-z_][A-Za-z0-9_]*");
      if (!re2::RE2::FullMatch(name, kName) || name == "help") {
        return InvalidArgumentError(
            fmt::format("{}: params.{}: not a valid parameter name (letters, digits, _; not `help`)", origin, name));
      }
      TORCHX_ASSIGN_OR_RETURN(Param p, ReadParam(name, kv.second, fmt::format("{}: params.{}", origin, name)));
      spec.params.push_back(std::move(p));
    }
  }
  if (YAML::Node va = root["varargs"]) {
    TORCHX_RETURN_IF_ERROR(CheckKeys(va, origin + ": varargs", {"name", "help"}));
    Param p;
    p.name = va["name"] ? va["name"].Scalar() : "args";
    p.help = va["help"] ? va["help"].Scalar() : "";
    spec.varargs = std::move(p);
  }
  // Check the template once with every parameter bound, so unknown placeholders fail at load.
  Bindings probe;
  for (const Param& p : spec.params) probe[p.name] = Value("");
  if (spec.varargs) probe[spec.varargs->name] = Value(Value::List{});
  YAML::Node app_template = root["app"];
  TORCHX_RETURN_IF_ERROR(Substitute(app_template, probe, origin + ": app").status());

  std::string varargs_name = spec.varargs ? spec.varargs->name : "";
  auto build = [app_template, varargs_name, origin](const ComponentArgs& a,
                                                    const BuildContext& ctx) -> Result<specs::AppDef> {
    Bindings b = a.values;
    if (!varargs_name.empty()) {
      Value::List l;
      for (const std::string& s : a.varargs) l.emplace_back(s);
      b[varargs_name] = Value(std::move(l));
    }
    TORCHX_ASSIGN_OR_RETURN(YAML::Node node, Substitute(app_template, b, "app"));
    auto app = specs::internal::AppDefFromYamlNode(node, ctx.named_resources);
    if (!app) return app.error().WithContext(origin);
    return app;
  };
  return std::unique_ptr<Component>(std::make_unique<FunctionComponent>(std::move(spec), std::move(build), origin));
}

Result<std::unique_ptr<Component>> LoadDeclarativeComponent(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(fmt::format("component file {}: cannot be read", path));
  std::stringstream buf;
  buf << in.rdbuf();
  return ParseDeclarativeComponent(buf.str(), path);
}

}  // namespace torchx::components
