#include "torchx/specs/serialize.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "core/file_text.h"
#include "core/json_yaml.h"
#include "core/spelling.h"
#include "core/value_json.h"
#include "specs/yaml_reader.h"
#include "torchx/specs/named_resources.h"

namespace torchx::specs {
namespace {

using OrderedJson = nlohmann::ordered_json;

// ---- writing ----

OrderedJson ToJson(const Value& v) { return ::torchx::internal::ValueToJson<OrderedJson>(v); }

OrderedJson ToJson(const Value::Map& m) { return ToJson(Value(m)); }

template <typename Map>
OrderedJson MapToJson(const Map& m) {
  OrderedJson obj = OrderedJson::object();
  for (const auto& [k, v] : m) obj[k] = v;
  return obj;
}

OrderedJson MountToJson(const Mount& m) {
  if (const auto* b = std::get_if<BindMount>(&m)) {
    return {{"type", "bind"}, {"src_path", b->src_path}, {"dst_path", b->dst_path}, {"read_only", b->read_only}};
  }
  if (const auto* v = std::get_if<VolumeMount>(&m)) {
    return {{"type", "volume"}, {"src", v->src}, {"dst_path", v->dst_path}, {"read_only", v->read_only}};
  }
  const auto& d = std::get<DeviceMount>(m);
  return {{"type", "device"}, {"src_path", d.src_path}, {"dst_path", d.dst_path}, {"permissions", d.permissions}};
}

OrderedJson RoleToJson(const Role& r) {
  OrderedJson mounts = OrderedJson::array();
  for (const Mount& m : r.mounts) mounts.push_back(MountToJson(m));
  return {
      {"name", r.name},
      {"image", r.image},
      {"entrypoint", r.entrypoint},
      {"args", r.args},
      {"env", MapToJson(r.env)},
      {"num_replicas", r.num_replicas},
      {"min_replicas", r.min_replicas ? OrderedJson(*r.min_replicas) : OrderedJson(nullptr)},
      {"max_retries", r.max_retries},
      {"retry_policy", RetryPolicyName(r.retry_policy)},
      {"resource",
       {{"cpu", r.resource.cpu},
        {"gpu", r.resource.gpu},
        {"memMB", r.resource.memMB},
        {"capabilities", ToJson(r.resource.capabilities)},
        {"devices", MapToJson(r.resource.devices)},
        {"tags", ToJson(r.resource.tags)}}},
      {"port_map", MapToJson(r.port_map)},
      {"metadata", ToJson(r.metadata)},
      {"mounts", std::move(mounts)},
  };
}

OrderedJson AppToJson(const AppDef& app) {
  OrderedJson roles = OrderedJson::array();
  for (const Role& r : app.roles) roles.push_back(RoleToJson(r));
  return {{"name", app.name}, {"roles", std::move(roles)}, {"metadata", MapToJson(app.metadata)}};
}

// ---- reading ----

// Walks a JSON document against the AppDef schema, carrying the path for error messages.
class Reader {
 public:
  Reader(bool scalars_as_text, const NamedResourceSource* resources)
      : scalars_as_text_(scalars_as_text), resources_(resources) {}

  Result<Resource> TopResource(const OrderedJson& j) { return ReadResource(j, "resource"); }

  Result<AppDef> App(const OrderedJson& j) {
    TORCHX_RETURN_IF_ERROR(Keys(j, "", {"name", "roles", "metadata"}));
    AppDef app;
    TORCHX_RETURN_IF_ERROR(Str(j, "", "name", app.name));
    if (j.contains("roles")) {
      const OrderedJson& roles = j["roles"];
      if (!roles.is_array()) return TypeError("roles", "a list", roles);
      for (size_t i = 0; i < roles.size(); ++i) {
        TORCHX_ASSIGN_OR_RETURN(Role r, ReadRole(roles[i], fmt::format("roles[{}]", i)));
        app.roles.push_back(std::move(r));
      }
    }
    TORCHX_RETURN_IF_ERROR(StrMap(j, "", "metadata", app.metadata));
    return app;
  }

 private:
  static std::string Join(std::string_view path, std::string_view key) {
    return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
  }
  static std::string_view KindOf(const OrderedJson& v) {
    if (v.is_null()) return "null";
    if (v.is_boolean()) return "bool";
    if (v.is_number_integer()) return "integer";
    if (v.is_number()) return "number";
    if (v.is_string()) return "string";
    if (v.is_array()) return "list";
    return "object";
  }
  static Status TypeError(std::string_view path, std::string_view expected, const OrderedJson& got) {
    return InvalidArgumentError(fmt::format("{}: expected {}, got {} {}", path, expected, KindOf(got), got.dump()));
  }

  static Status Keys(const OrderedJson& j, std::string_view path, std::vector<std::string> valid) {
    if (!j.is_object()) return TypeError(path.empty() ? "AppDef" : path, "an object", j);
    for (const auto& [k, _] : j.items()) {
      if (std::find(valid.begin(), valid.end(), k) == valid.end()) {
        return InvalidArgumentError(
            fmt::format("{}: unknown field.{}", Join(path, k), ::torchx::internal::SuggestionSuffix(k, valid)));
      }
    }
    return OkStatus();
  }

  Status StrValue(const OrderedJson& v, const std::string& path, std::string& out) const {
    if (v.is_string()) {
      out = v.get<std::string>();
    } else if (scalars_as_text_ && (v.is_number() || v.is_boolean())) {
      out = v.is_boolean() ? (v.get<bool>() ? "true" : "false") : v.dump();
    } else {
      return TypeError(path, "a string", v);
    }
    return OkStatus();
  }

  Status Str(const OrderedJson& j, std::string_view path, const char* key, std::string& out) const {
    if (!j.contains(key)) return OkStatus();
    return StrValue(j[key], Join(path, key), out);
  }

  static Status IntValue(const OrderedJson& v, const std::string& path, int& out) {
    if (!v.is_number_integer()) return TypeError(path, "an integer", v);
    auto n = v.get<std::int64_t>();
    if (n < INT32_MIN || n > INT32_MAX) {
      return InvalidArgumentError(fmt::format("{}: {} is out of range", path, n));
    }
    out = static_cast<int>(n);
    return OkStatus();
  }

  static Status Int(const OrderedJson& j, std::string_view path, const char* key, int& out) {
    if (!j.contains(key)) return OkStatus();
    return IntValue(j[key], Join(path, key), out);
  }

  Status StrMap(const OrderedJson& j, std::string_view path, const char* key,
                std::map<std::string, std::string>& out) const {
    if (!j.contains(key)) return OkStatus();
    const OrderedJson& m = j[key];
    std::string p = Join(path, key);
    if (m.is_null()) return OkStatus();
    if (!m.is_object()) return TypeError(p, "an object of strings", m);
    for (const auto& [k, v] : m.items()) {
      TORCHX_RETURN_IF_ERROR(StrValue(v, fmt::format("{}[{}]", p, k), out[k]));
    }
    return OkStatus();
  }

  static Status IntMap(const OrderedJson& j, std::string_view path, const char* key, std::map<std::string, int>& out) {
    if (!j.contains(key)) return OkStatus();
    const OrderedJson& m = j[key];
    std::string p = Join(path, key);
    if (m.is_null()) return OkStatus();
    if (!m.is_object()) return TypeError(p, "an object of integers", m);
    for (const auto& [k, v] : m.items()) {
      TORCHX_RETURN_IF_ERROR(IntValue(v, fmt::format("{}[{}]", p, k), out[k]));
    }
    return OkStatus();
  }

  static Value ToValue(const OrderedJson& v) { return ::torchx::internal::ValueFromJson(v); }

  static Status ValueMap(const OrderedJson& j, std::string_view path, const char* key, Value::Map& out) {
    if (!j.contains(key) || j[key].is_null()) return OkStatus();
    if (!j[key].is_object()) return TypeError(Join(path, key), "an object", j[key]);
    out = ToValue(j[key]).as_map();
    return OkStatus();
  }

  static Status Bool(const OrderedJson& j, std::string_view path, const char* key, bool& out) {
    if (!j.contains(key)) return OkStatus();
    if (!j[key].is_boolean()) return TypeError(Join(path, key), "true or false", j[key]);
    out = j[key].get<bool>();
    return OkStatus();
  }

  Result<Resource> ReadResource(const OrderedJson& j, const std::string& path) const {
    if (j.is_string()) {  // a named resource, e.g. "gpu.small"
      auto r = GetNamedResource(j.get<std::string>(), resources_);
      if (!r) return InvalidArgumentError(fmt::format("{}: {}", path, r.error().message()));
      return r;
    }
    TORCHX_RETURN_IF_ERROR(Keys(j, path, {"cpu", "gpu", "memMB", "capabilities", "devices", "tags"}));
    // TorchX's Resource takes all three or, left out entirely, is the scheduler's default: one
    // given without the others is named as missing (not as the -1 it would be read as).
    static constexpr std::array<const char*, 3> kSizes = {"cpu", "gpu", "memMB"};
    if (std::any_of(kSizes.begin(), kSizes.end(), [&](const char* k) { return j.contains(k); })) {
      for (const char* key : kSizes) {
        if (j.contains(key)) continue;
        return InvalidArgumentError(fmt::format(
            "{}: missing; a resource gives all of cpu, gpu and memMB (gpu: 0 for none), or none of them for the "
            "scheduler's default, or is a named resource",
            Join(path, key)));
      }
    }
    Resource r;
    TORCHX_RETURN_IF_ERROR(Int(j, path, "cpu", r.cpu));
    TORCHX_RETURN_IF_ERROR(Int(j, path, "gpu", r.gpu));
    TORCHX_RETURN_IF_ERROR(Int(j, path, "memMB", r.memMB));
    TORCHX_RETURN_IF_ERROR(ValueMap(j, path, "capabilities", r.capabilities));
    TORCHX_RETURN_IF_ERROR(IntMap(j, path, "devices", r.devices));
    TORCHX_RETURN_IF_ERROR(ValueMap(j, path, "tags", r.tags));
    return r;
  }

  Result<Mount> ReadMount(const OrderedJson& j, const std::string& path) const {
    if (!j.is_object()) return TypeError(path, "an object", j);
    std::string type;
    if (!j.contains("type")) {
      return InvalidArgumentError(fmt::format("{}.type: missing, must be one of [bind, volume, device]", path));
    }
    TORCHX_RETURN_IF_ERROR(Str(j, path, "type", type));
    if (type == "bind") {
      TORCHX_RETURN_IF_ERROR(Keys(j, path, {"type", "src_path", "dst_path", "read_only"}));
      BindMount m;
      TORCHX_RETURN_IF_ERROR(Str(j, path, "src_path", m.src_path));
      TORCHX_RETURN_IF_ERROR(Str(j, path, "dst_path", m.dst_path));
      TORCHX_RETURN_IF_ERROR(Bool(j, path, "read_only", m.read_only));
      return Mount(m);
    }
    if (type == "volume") {
      TORCHX_RETURN_IF_ERROR(Keys(j, path, {"type", "src", "dst_path", "read_only"}));
      VolumeMount m;
      TORCHX_RETURN_IF_ERROR(Str(j, path, "src", m.src));
      TORCHX_RETURN_IF_ERROR(Str(j, path, "dst_path", m.dst_path));
      TORCHX_RETURN_IF_ERROR(Bool(j, path, "read_only", m.read_only));
      return Mount(m);
    }
    if (type == "device") {
      TORCHX_RETURN_IF_ERROR(Keys(j, path, {"type", "src_path", "dst_path", "permissions"}));
      DeviceMount m;
      TORCHX_RETURN_IF_ERROR(Str(j, path, "src_path", m.src_path));
      m.dst_path = m.src_path;
      TORCHX_RETURN_IF_ERROR(Str(j, path, "dst_path", m.dst_path));
      TORCHX_RETURN_IF_ERROR(Str(j, path, "permissions", m.permissions));
      return Mount(m);
    }
    return InvalidArgumentError(
        fmt::format("{}.type: invalid mount type '{}', must be one of [bind, volume, device]", path, type));
  }

  Result<Role> ReadRole(const OrderedJson& j, const std::string& path) const {
    TORCHX_RETURN_IF_ERROR(Keys(j, path,
                                {"name", "image", "entrypoint", "args", "env", "num_replicas", "min_replicas",
                                 "max_retries", "retry_policy", "resource", "port_map", "metadata", "mounts"}));
    Role r;
    TORCHX_RETURN_IF_ERROR(Str(j, path, "name", r.name));
    TORCHX_RETURN_IF_ERROR(Str(j, path, "image", r.image));
    TORCHX_RETURN_IF_ERROR(Str(j, path, "entrypoint", r.entrypoint));
    if (j.contains("args") && !j["args"].is_null()) {
      const OrderedJson& args = j["args"];
      if (!args.is_array()) return TypeError(Join(path, "args"), "a list of strings", args);
      for (size_t i = 0; i < args.size(); ++i) {
        TORCHX_RETURN_IF_ERROR(StrValue(args[i], fmt::format("{}.args[{}]", path, i), r.args.emplace_back()));
      }
    }
    TORCHX_RETURN_IF_ERROR(StrMap(j, path, "env", r.env));
    TORCHX_RETURN_IF_ERROR(Int(j, path, "num_replicas", r.num_replicas));
    if (j.contains("min_replicas") && !j["min_replicas"].is_null()) {
      int m = 0;
      TORCHX_RETURN_IF_ERROR(Int(j, path, "min_replicas", m));
      r.min_replicas = m;
    }
    TORCHX_RETURN_IF_ERROR(Int(j, path, "max_retries", r.max_retries));
    if (j.contains("retry_policy")) {
      std::string p;
      TORCHX_RETURN_IF_ERROR(Str(j, path, "retry_policy", p));
      auto policy = ParseRetryPolicy(p);
      if (!policy) return policy.error().WithContext(path);
      r.retry_policy = *policy;
    }
    if (j.contains("resource") && !j["resource"].is_null()) {
      TORCHX_ASSIGN_OR_RETURN(r.resource, ReadResource(j["resource"], Join(path, "resource")));
    }
    TORCHX_RETURN_IF_ERROR(IntMap(j, path, "port_map", r.port_map));
    TORCHX_RETURN_IF_ERROR(ValueMap(j, path, "metadata", r.metadata));
    if (j.contains("mounts") && !j["mounts"].is_null()) {
      const OrderedJson& mounts = j["mounts"];
      if (!mounts.is_array()) return TypeError(Join(path, "mounts"), "a list", mounts);
      for (size_t i = 0; i < mounts.size(); ++i) {
        TORCHX_ASSIGN_OR_RETURN(Mount m, ReadMount(mounts[i], fmt::format("{}.mounts[{}]", path, i)));
        r.mounts.push_back(std::move(m));
      }
    }
    return r;
  }

  bool scalars_as_text_;
  const NamedResourceSource* resources_;  // may be null: built-in names only
};

// ---- YAML <-> JSON ----

// YAML 1.2 core-schema scalar resolution for plain (unquoted) scalars.
constexpr int kYamlMaxDepth = 128;

// JSON, and so the canonical form, carries only UTF-8 text; YAML input is checked at the door.
bool IsUtf8(const std::string& s) {
  try {
    (void)OrderedJson(s).dump();
    return true;
  } catch (const OrderedJson::type_error&) {
    return false;
  }
}

// Unicode's noncharacters (U+FDD0..U+FDEF, and the last two code points of every plane): the
// YAML emitter writes each as U+FFFD, so such text would not read back as it was written; and
// YAML 1.2 does not count U+FFFE and U+FFFF as printable at all. `s` is valid UTF-8.
std::optional<char32_t> FirstNoncharacter(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    auto b = static_cast<unsigned char>(s[i]);
    int len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    char32_t cp = len == 1 ? b : len == 2 ? (b & 0x1Fu) : len == 3 ? (b & 0x0Fu) : (b & 0x07u);
    for (int k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
    if ((cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE) return cp;
    i += static_cast<size_t>(len);
  }
  return std::nullopt;
}

Status CheckText(const std::string& s, const std::string& what) {
  if (!IsUtf8(s)) return InvalidArgumentError(fmt::format("{}: not valid UTF-8 text", what));
  if (auto cp = FirstNoncharacter(s)) {
    return InvalidArgumentError(fmt::format("{}: holds the Unicode noncharacter U+{:04X}, which YAML text cannot carry",
                                            what, static_cast<std::uint32_t>(*cp)));
  }
  return OkStatus();
}

Result<OrderedJson> YamlToJson(const YAML::Node& n, const std::string& path, int depth = 0, bool keep_tuples = false) {
  if (depth > kYamlMaxDepth) {
    return InvalidArgumentError(fmt::format("AppDef YAML: nested deeper than {} levels", kYamlMaxDepth));
  }
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return OrderedJson(nullptr);
    case YAML::NodeType::Scalar:
      TORCHX_RETURN_IF_ERROR(CheckText(n.Scalar(), path.empty() ? "AppDef" : path));
      return n.Tag() == "!" ? OrderedJson(n.Scalar())
                            : OrderedJson(torchx::internal::YamlPlainScalar(n.Scalar()));  // "!" = quoted
    case YAML::NodeType::Sequence: {
      OrderedJson arr = OrderedJson::array();
      size_t i = 0;
      for (const auto& item : n) {
        TORCHX_ASSIGN_OR_RETURN(OrderedJson v,
                                YamlToJson(item, fmt::format("{}[{}]", path, i++), depth + 1, keep_tuples));
        arr.push_back(std::move(v));
      }
      if (keep_tuples && n.Tag() == "tag:yaml.org,2002:python/tuple")
        return OrderedJson{{"__torchx_tuple__", std::move(arr)}};
      return arr;
    }
    case YAML::NodeType::Map: {
      OrderedJson obj = OrderedJson::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) {
          return InvalidArgumentError(fmt::format("{}: map keys must be scalars", path));
        }
        std::string key = kv.first.Scalar();
        TORCHX_RETURN_IF_ERROR(CheckText(key, fmt::format("{}: key", path)));
        TORCHX_ASSIGN_OR_RETURN(OrderedJson v,
                                YamlToJson(kv.second, path.empty() ? key : path + "." + key, depth + 1, keep_tuples));
        obj[key] = std::move(v);
      }
      return obj;
    }
  }
  return OrderedJson(nullptr);
}

}  // namespace

std::string AppDefToJson(const AppDef& app, int indent) {
  // An AppDef built in code may hold bytes that are not UTF-8; JSON cannot carry them, so they
  // are written as U+FFFD rather than failing (readers only ever produce UTF-8).
  return AppToJson(app).dump(indent, ' ', false, OrderedJson::error_handler_t::replace);
}

// Nesting deeper than any real spec: the reader recurses, so the depth is bounded at the parser.
constexpr int kMaxDepth = 128;

Result<AppDef> AppDefFromJson(std::string_view json, const NamedResourceSource* resources) {
  OrderedJson j;
  bool too_deep = false;
  try {
    j = OrderedJson::parse(json, [&too_deep](int depth, OrderedJson::parse_event_t, OrderedJson&) {
      if (depth > kMaxDepth) {
        too_deep = true;
        throw std::length_error("depth");
      }
      return true;
    });
  } catch (const OrderedJson::exception& e) {  // parse_error, and out_of_range for number overflow
    return InvalidArgumentError(fmt::format("AppDef JSON: {}", e.what()));
  } catch (const std::length_error&) {
  }
  if (too_deep) {
    return InvalidArgumentError(fmt::format("AppDef JSON: nested deeper than {} levels", kMaxDepth));
  }
  return Reader(/*scalars_as_text=*/false, resources).App(j);
}

std::string AppDefToYaml(const AppDef& app) { return torchx::internal::JsonToYaml(AppToJson(app)); }

Result<AppDef> AppDefFromYaml(std::string_view yaml, const NamedResourceSource* resources) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(fmt::format("AppDef YAML: {}", e.what()));
  }
  return internal::AppDefFromYamlNode(root, resources);
}

Result<AppDef> internal::AppDefFromYamlNode(const YAML::Node& root, const NamedResourceSource* resources) {
  TORCHX_ASSIGN_OR_RETURN(OrderedJson j, YamlToJson(root, ""));
  return Reader(/*scalars_as_text=*/true, resources).App(j);
}

Result<OrderedJson> internal::YamlTextToJson(std::string_view text, std::string_view what, bool keep_tuples) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(fmt::format("{}: {}", what, e.what()));
  }
  return YamlToJson(root, "", 0, keep_tuples);
}

Result<OrderedJson> internal::YamlMappingFromText(std::string_view text, const std::string& origin,
                                                  std::string_view must_be) {
  TORCHX_ASSIGN_OR_RETURN(OrderedJson j, YamlTextToJson(text, origin));
  if (!j.is_object()) return InvalidArgumentError(fmt::format("must be a mapping {}", must_be)).WithContext(origin);
  return j;
}

Result<AppDef> AppDefFromFile(const std::string& path, const NamedResourceSource* resources) {
  TORCHX_ASSIGN_OR_RETURN(std::string text, ::torchx::internal::ReadInputFile(path, "spec file"));
  bool is_json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  auto app = is_json ? AppDefFromJson(text, resources) : AppDefFromYaml(text, resources);
  if (!app) return app.error().WithContext(path);
  return app;
}

std::string ResourceToJson(const Resource& r) {
  AppDef app;
  Role role;
  role.resource = r;
  app.roles.push_back(std::move(role));
  return AppToJson(app)["roles"][0]["resource"].dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

Result<Resource> ResourceFromJson(std::string_view json) {
  OrderedJson j = OrderedJson::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgumentError("resource JSON: not valid JSON");
  return Reader(/*scalars_as_text=*/false, nullptr).TopResource(j);
}

}  // namespace torchx::specs
