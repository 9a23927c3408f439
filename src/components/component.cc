#include "torchx/components/component.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <type_traits>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/pystr.h"
#include "core/spelling.h"
#include "core/strings.h"
#include "torchx/specs/option_value.h"
#include "torchx/specs/runopts.h"

namespace torchx::components {
namespace {

std::string OptionName(const Param& p) {
  return p.name.size() == 1 ? fmt::format("-{}/--{}", p.name, p.name) : "--" + p.name;
}

Value ToValue(specs::CfgVal v) {
  return std::visit(
      [](auto&& x) -> Value {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return Value();
        } else if constexpr (std::is_same_v<T, specs::CfgList>) {
          Value::List l(x.begin(), x.end());
          return Value(std::move(l));
        } else if constexpr (std::is_same_v<T, specs::CfgDict>) {
          Value::Map m;
          for (auto& [k, item] : x) m[k] = Value(item);
          return Value(std::move(m));
        } else {
          return Value(std::move(x));
        }
      },
      std::move(v));
}

// Decodes one CLI string into the parameter's type (specs/option_value.h, TorchX's rules for
// component arguments). An Optional parameter given "" is None.
Result<Value> Decode(const Param& p, const std::string& text) {
  if (p.optional && text.empty() && p.type != ParamType::kStr) return Value();
  TORCHX_ASSIGN_OR_RETURN(specs::CfgVal v,
                          specs::DecodeOptionValue(p.type, text, specs::OptionSyntax::kComponentArg, OptionName(p)));
  return ToValue(std::move(v));
}

// Takes a JSON value as the parameter's type without string decoding.
Result<Value> FromJson(const Param& p, const nlohmann::json& v) {
  auto bad = [&] {
    return InvalidArgumentError(fmt::format("{}: expected {}, got {}", p.name, ParamTypeName(p.type), v.dump()));
  };
  auto scalar_text = [](const nlohmann::json& x) { return x.is_string() ? x.get<std::string>() : x.dump(); };
  if (v.is_null()) {
    if (p.optional || (p.default_value && p.default_value->is_null())) return Value();
    return bad();
  }
  switch (p.type) {
    case ParamType::kStr:
      if (v.is_string()) return Value(v.get<std::string>());
      if (v.is_number() || v.is_boolean()) return Value(v.dump());
      return bad();
    case ParamType::kInt:
      if (v.is_number_integer()) return Decode(p, v.dump());  // same range check as the CLI
      if (v.is_string()) return Decode(p, v.get<std::string>());
      return bad();
    case ParamType::kFloat:
      if (v.is_number()) return Value(v.get<double>());
      if (v.is_string()) return Decode(p, v.get<std::string>());
      return bad();
    case ParamType::kBool:
      if (v.is_boolean()) return Value(v.get<bool>());
      if (v.is_string()) return Decode(p, v.get<std::string>());
      return bad();
    case ParamType::kListStr: {
      if (!v.is_array()) return v.is_string() ? Decode(p, v.get<std::string>()) : bad();
      Value::List l;
      for (const auto& item : v) l.emplace_back(scalar_text(item));
      return Value(std::move(l));
    }
    case ParamType::kDictStr: {
      if (!v.is_object()) return v.is_string() ? Decode(p, v.get<std::string>()) : bad();
      Value::Map m;
      for (const auto& [k, item] : v.items()) m[k] = Value(scalar_text(item));
      return Value(std::move(m));
    }
  }
  return bad();
}

const Param* FindParam(const ComponentSpec& spec, std::string_view name) {
  for (const Param& p : spec.params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> ParamNames(const ComponentSpec& spec) {
  std::vector<std::string> names;
  for (const Param& p : spec.params) names.push_back((p.name.size() == 1 ? "-" : "--") + p.name);
  return names;
}

// Applies config defaults, then declared defaults, and checks required parameters.
Status Finish(const ComponentSpec& spec, const ConfigDefaults& config_defaults, ComponentArgs& args,
              bool varargs_given) {
  for (const auto& [key, text] : config_defaults) {
    if (spec.varargs && key == spec.varargs->name) {
      if (!varargs_given) args.varargs = ::torchx::internal::SplitWhitespace(text);
      continue;
    }
    const Param* p = FindParam(spec, key);
    if (!p) {
      std::vector<std::string> names;
      for (const Param& q : spec.params) names.push_back(q.name);
      return InvalidArgumentError(fmt::format("[component:{}] {}: not a parameter of {}.{}", spec.name, key, spec.name,
                                              internal::SuggestionSuffix(key, names)));
    }
    if (args.values.count(p->name)) continue;  // the command line wins
    auto v = Decode(*p, text);
    if (!v) return v.error().WithContext(fmt::format("[component:{}] {}", spec.name, key));
    args.values[p->name] = std::move(*v);
  }
  std::vector<std::string> missing;
  for (const Param& p : spec.params) {
    if (args.values.count(p.name)) continue;
    if (p.default_value) {
      args.values[p.name] = *p.default_value;
    } else {
      missing.push_back(OptionName(p));
    }
  }
  if (!missing.empty() && !args.help_requested) {
    std::string list;
    for (size_t i = 0; i < missing.size(); ++i) list += (i ? ", " : "") + missing[i];
    return InvalidArgumentError(fmt::format("{}: the following arguments are required: {}", spec.name, list));
  }
  return OkStatus();
}

std::string DefaultText(const Value& v) {
  if (v.is_null()) return "None";
  if (v.is_bool()) return v.as_bool() ? "True" : "False";
  if (v.is_int()) return std::to_string(v.as_int());
  if (v.is_double()) return internal::PyFloatStr(v.as_double());
  if (v.is_string()) return v.as_string();
  if (v.is_list()) {
    std::string out = "[";
    for (size_t i = 0; i < v.as_list().size(); ++i) {
      out += (i ? ", " : "") + internal::PyRepr(v.as_list()[i].as_string());
    }
    return out + "]";
  }
  std::string out = "{";
  bool first = true;
  for (const auto& [k, item] : v.as_map()) {
    out +=
        (first ? "" : ", ") + internal::PyRepr(k) + ": " + internal::PyRepr(item.is_string() ? item.as_string() : "");
    first = false;
  }
  return out + "}";
}

std::string PyTypeAnnotation(const Param& p) {
  std::string t;
  switch (p.type) {
    case ParamType::kStr:
      t = "str";
      break;
    case ParamType::kInt:
      t = "int";
      break;
    case ParamType::kFloat:
      t = "float";
      break;
    case ParamType::kBool:
      t = "bool";
      break;
    case ParamType::kListStr:
      t = "List[str]";
      break;
    case ParamType::kDictStr:
      t = "Dict[str, str]";
      break;
  }
  return p.optional ? "Optional[" + t + "]" : t;
}

std::string PyDefault(const Value& v) {
  if (v.is_string()) return internal::PyRepr(v.as_string());
  return DefaultText(v);
}

}  // namespace

std::string_view ParamTypeName(ParamType t) { return specs::CfgTypeShortName(t); }

Result<ParamType> ParseParamType(std::string_view name) {
  for (ParamType t : {ParamType::kStr, ParamType::kInt, ParamType::kFloat, ParamType::kBool, ParamType::kListStr,
                      ParamType::kDictStr}) {
    if (ParamTypeName(t) == name) return t;
  }
  return InvalidArgumentError(
      fmt::format("type: invalid parameter type '{}', must be one of [str, int, float, bool, list, dict]", name));
}

const Value& ComponentArgs::Get(const std::string& name) const {
  static const Value kNull;
  auto it = values.find(name);
  return it == values.end() ? kNull : it->second;
}
std::string ComponentArgs::Str(const std::string& name) const {
  const Value& v = Get(name);
  return v.is_string() ? v.as_string() : "";
}
std::optional<std::string> ComponentArgs::OptStr(const std::string& name) const {
  const Value& v = Get(name);
  if (v.is_null()) return std::nullopt;
  return v.as_string();
}
std::int64_t ComponentArgs::Int(const std::string& name) const { return Get(name).as_int(); }
double ComponentArgs::Float(const std::string& name) const {
  const Value& v = Get(name);
  return v.is_int() ? static_cast<double>(v.as_int()) : v.as_double();
}
bool ComponentArgs::Bool(const std::string& name) const { return Get(name).as_bool(); }
std::optional<std::vector<std::string>> ComponentArgs::OptList(const std::string& name) const {
  const Value& v = Get(name);
  if (v.is_null()) return std::nullopt;
  std::vector<std::string> out;
  for (const Value& item : v.as_list()) out.push_back(item.as_string());
  return out;
}
std::optional<std::map<std::string, std::string>> ComponentArgs::OptDict(const std::string& name) const {
  const Value& v = Get(name);
  if (v.is_null()) return std::nullopt;
  std::map<std::string, std::string> out;
  for (const auto& [k, item] : v.as_map()) out[k] = item.as_string();
  return out;
}

Result<ComponentArgs> ParseComponentArgs(const ComponentSpec& spec, const std::vector<std::string>& argv,
                                         const ConfigDefaults& config_defaults) {
  ComponentArgs args;
  bool varargs_given = false;
  auto no_positional = [&](const std::string& a) {
    return InvalidArgumentError(
        fmt::format("{}: unrecognized argument '{}' ({} takes no positional arguments)", spec.name, a, spec.name));
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--") {
      if (!spec.varargs) {
        if (i + 1 < argv.size()) return no_positional(argv[i + 1]);
        break;
      }
      args.varargs.assign(argv.begin() + static_cast<long>(i) + 1, argv.end());
      varargs_given = true;
      break;
    }
    if (a == "--help" || (a == "-h" && !FindParam(spec, "h"))) {
      args.help_requested = true;
      continue;
    }
    bool looks_like_option =
        a.size() > 1 && a[0] == '-' && !(std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.');
    if (!looks_like_option) {
      if (!spec.varargs) return no_positional(a);
      args.varargs.assign(argv.begin() + static_cast<long>(i), argv.end());
      varargs_given = true;
      break;
    }
    std::string name;
    std::optional<std::string> inline_value;
    if (a.rfind("--", 0) == 0) {
      name = a.substr(2);
    } else {
      name = a.substr(1);
    }
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const Param* p = FindParam(spec, name);
    bool single_dash = a[1] != '-';
    if (!p || (single_dash && p->name.size() != 1)) {
      std::string hint =
          spec.varargs ? fmt::format(" (arguments for the program go after `--`, e.g. `{} ... -- {}`)", spec.name, a)
                       : "";
      return InvalidArgumentError(
          fmt::format("{}: unrecognized argument '{}'.{}{}", spec.name, a,
                      internal::SuggestionSuffix((single_dash ? "-" : "--") + name, ParamNames(spec)), hint));
    }
    if (args.values.count(p->name)) {
      return InvalidArgumentError(
          fmt::format("{}: repeated command line argument {}: give each parameter once", spec.name, OptionName(*p)));
    }
    std::string text;
    if (inline_value) {
      text = *inline_value;
    } else if (i + 1 < argv.size()) {
      text = argv[++i];
    } else {
      return InvalidArgumentError(fmt::format("{}: argument {}: expected one argument", spec.name, OptionName(*p)));
    }
    auto v = Decode(*p, text);
    if (!v) return v.error().WithContext(spec.name);
    args.values[p->name] = std::move(*v);
  }
  // TorchX strips one leading "--" from the remainder ("script.py -- --lr 1" keeps the rest).
  if (!args.varargs.empty() && args.varargs.front() == "--") args.varargs.erase(args.varargs.begin());
  TORCHX_RETURN_IF_ERROR(Finish(spec, config_defaults, args, varargs_given));
  return args;
}

Result<ComponentArgs> ComponentArgsFromJson(const ComponentSpec& spec, std::string_view json,
                                            const ConfigDefaults& config_defaults) {
  auto j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError(fmt::format("{}: component arguments must be a JSON object", spec.name));
  }
  ComponentArgs args;
  bool varargs_given = false;
  for (const auto& [key, v] : j.items()) {
    if (spec.varargs && (key == "*" || key == spec.varargs->name)) {
      if (!v.is_array()) {
        return InvalidArgumentError(fmt::format("{}: {}: expected a list of strings", spec.name, key));
      }
      for (const auto& item : v) args.varargs.push_back(item.is_string() ? item.get<std::string>() : item.dump());
      varargs_given = true;
      continue;
    }
    const Param* p = FindParam(spec, key);
    if (!p) {
      std::vector<std::string> names;
      for (const Param& q : spec.params) names.push_back(q.name);
      return InvalidArgumentError(
          fmt::format("{}: {}: not a parameter.{}", spec.name, key, internal::SuggestionSuffix(key, names)));
    }
    auto value = FromJson(*p, v);
    if (!value) return value.error().WithContext(spec.name);
    args.values[p->name] = std::move(*value);
  }
  TORCHX_RETURN_IF_ERROR(Finish(spec, config_defaults, args, varargs_given));
  return args;
}

std::string ComponentHelp(const ComponentSpec& spec) {
  std::string usage = fmt::format("usage: torchx run <run args...> {} [--help]", spec.name);
  for (const Param& p : spec.params) {
    std::string meta = p.name;
    std::transform(meta.begin(), meta.end(), meta.begin(), [](unsigned char c) { return std::toupper(c); });
    std::string item = fmt::format("{}{} {}", p.name.size() == 1 ? "-" : "--", p.name, meta);
    usage += p.default_value ? fmt::format(" [{}]", item) : " " + item;
  }
  if (spec.varargs) usage += fmt::format(" [{} ...]", spec.varargs->name);
  std::string out = usage + "\n\n" + spec.summary + "\n";
  if (!spec.description.empty()) out += "\n" + spec.description + "\n";
  if (spec.varargs) {
    out += fmt::format("\npositional arguments:\n  {}\n        {}\n", spec.varargs->name, spec.varargs->help);
  }
  out += "\noptions:\n  --help\n        show this help message and exit\n";
  for (const Param& p : spec.params) {
    std::string suffix = p.default_value ? fmt::format(" (default: {})", DefaultText(*p.default_value)) : " (required)";
    out += fmt::format("  {} {}\n        {}{}\n", OptionName(p), ParamTypeName(p.type), p.help, suffix);
  }
  return out;
}

std::string ComponentSignature(const ComponentSpec& spec) {
  std::string fn = spec.name.substr(spec.name.rfind('.') + 1);
  std::vector<std::string> params;
  if (spec.varargs) params.push_back(fmt::format("*{}: str", spec.varargs->name));
  for (const Param& p : spec.params) {
    std::string item = fmt::format("{}: {}", p.name, PyTypeAnnotation(p));
    if (p.default_value) item += " = " + PyDefault(*p.default_value);
    params.push_back(item);
  }
  std::string out = fmt::format("def {}(\n", fn);
  for (const std::string& p : params) out += fmt::format("    {},\n", p);
  out += ") -> specs.AppDef:\n    \"\"\"\n    " + spec.summary + "\n";
  if (!spec.description.empty()) {
    out += "\n";
    size_t start = 0;
    while (start <= spec.description.size()) {
      size_t nl = spec.description.find('\n', start);
      if (nl == std::string::npos) nl = spec.description.size();
      std::string line = spec.description.substr(start, nl - start);
      out += line.empty() ? "\n" : "    " + line + "\n";
      start = nl + 1;
    }
  }
  out += "\n    Args:\n";
  if (spec.varargs) out += fmt::format("        {}: {}\n", spec.varargs->name, spec.varargs->help);
  for (const Param& p : spec.params) out += fmt::format("        {}: {}\n", p.name, p.help);
  return out + "    \"\"\"\n";
}

Result<specs::AppDef> BuildAppDef(const Component& component, const ComponentArgs& args, const BuildContext& context) {
  auto app = component.Build(args, context);
  if (!app) return app.error().WithContext(component.spec().name);
  if (Status s = specs::ValidateAppDef(*app); !s.ok()) return s.WithContext(component.spec().name);
  return app;
}

Result<std::shared_ptr<const Component>> FindComponent(const ComponentSource& source, std::string_view name) {
  if (auto c = source.Find(name)) return c;
  auto suggestion = internal::SpellCheck(name, source.Names());
  return NotFoundError(fmt::format("component `{}` not found.{} Run `torchx builtins` to list the components.", name,
                                   suggestion ? fmt::format(" Did you mean `{}`?", *suggestion) : ""));
}

std::string DefaultImage() {
  if (const char* img = std::getenv("TORCHX_IMAGE"); img && *img) return img;
  return "ghcr.io/pytorch/torchx:0.7.0";
}

}  // namespace torchx::components
