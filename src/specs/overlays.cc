#include "torchx/specs/overlays.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "specs/yaml_reader.h"

namespace torchx::specs::overlays {
namespace {

using OrderedJson = nlohmann::ordered_json;

constexpr std::string_view kPut = "__put__:";
constexpr std::string_view kJoin = "__join__:";
constexpr std::string_view kDel = "__del__:";
// A Python tuple crossing from torchx.specs.overlays: {"__torchx_tuple__": [...]}. TorchX keeps
// tuples as a legacy spelling of PUT for lists (YAML's !!python/tuple).
constexpr std::string_view kTuple = "__torchx_tuple__";

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool IsTuple(const OrderedJson& v) {
  return v.is_object() && v.size() == 1 && v.contains(kTuple) && v[kTuple].is_array();
}

// Python's name for a value's type: the messages are TorchX's.
std::string_view PyType(const OrderedJson& v) {
  if (IsTuple(v)) return "tuple";
  switch (v.type()) {
    case OrderedJson::value_t::object:
      return "dict";
    case OrderedJson::value_t::array:
      return "list";
    case OrderedJson::value_t::string:
      return "str";
    case OrderedJson::value_t::boolean:
      return "bool";
    case OrderedJson::value_t::number_integer:
    case OrderedJson::value_t::number_unsigned:
      return "int";
    case OrderedJson::value_t::number_float:
      return "float";
    default:
      return "NoneType";
  }
}

bool IsDict(const OrderedJson& v) { return v.is_object() && !IsTuple(v); }

// Removes every key of `base` about `field` (operator or plain), except the plain one if asked.
void RemoveFieldKeys(OrderedJson& base, std::string_view field, bool keep_plain, std::string_view keep = {}) {
  std::vector<std::string> doomed;
  for (auto it = base.begin(); it != base.end(); ++it) {
    if (FieldOf(it.key()) != field) continue;
    if (keep_plain && it.key() == field) continue;
    if (!keep.empty() && it.key() == keep) continue;
    doomed.push_back(it.key());
  }
  for (const std::string& k : doomed) base.erase(k);
}

void MergeByKey(OrderedJson& base_list, const OrderedJson& overlay_list, const std::string& on) {
  // Matched items take the overlay's top-level fields; the rest are appended.
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < base_list.size(); ++i) {
    const OrderedJson& item = base_list[i];
    if (item.is_object() && item.contains(on)) index[item[on].dump()] = i;  // the last duplicate, as TorchX
  }
  for (const OrderedJson& item : overlay_list) {
    auto it = item.is_object() && item.contains(on) ? index.find(item[on].dump()) : index.end();
    if (it == index.end()) {
      base_list.push_back(item);
      continue;
    }
    for (auto field = item.begin(); field != item.end(); ++field) {
      if (field.key() != on) base_list[it->second][field.key()] = field.value();
    }
  }
}

Status ResolveJoin(OrderedJson& base, const std::string& key, const OrderedJson& value, const std::string& field) {
  RemoveFieldKeys(base, field, /*keep_plain=*/true);
  std::string_view rest = std::string_view(key).substr(kJoin.size());
  size_t colon = rest.find(':');
  if (colon == std::string_view::npos || colon + 1 == rest.size()) {
    return InvalidArgumentError(fmt::format("malformed JOIN key: `{}`, expected format from JOIN(field, on=key)", key));
  }
  std::string on(rest.substr(colon + 1));
  if (!value.is_array() || IsTuple(value)) {
    return InvalidArgumentError(fmt::format("JOIN requires a list value, got {} for field `{}`", PyType(value), field));
  }
  auto all_dicts = [](const OrderedJson& list) { return std::all_of(list.begin(), list.end(), IsDict); };
  if (!all_dicts(value)) {
    return InvalidArgumentError(
        fmt::format("JOIN requires a list of dicts as overlay value, but `{}` overlay contains non-dict items", field));
  }
  if (!base.contains(field)) {
    base[field] = value;
    return OkStatus();
  }
  OrderedJson& target = base[field];
  if (!target.is_array()) {
    return InvalidArgumentError(fmt::format("JOIN requires base[`{}`] to be a list, got {}", field, PyType(target)));
  }
  if (!all_dicts(target)) {
    return InvalidArgumentError(fmt::format("JOIN requires a list of dicts, but `{}` contains non-dict items", field));
  }
  MergeByKey(target, value, on);
  return OkStatus();
}

Status MergeValue(OrderedJson& base, const std::string& key, const OrderedJson& value, bool resolve) {
  auto it = base.find(key);
  if (it == base.end()) {
    base[key] = IsTuple(value) ? value[kTuple] : value;  // a tuple for a new key becomes a list
    return OkStatus();
  }
  OrderedJson& current = *it;
  if (IsDict(current) && IsDict(value)) return Apply(current, value, resolve);
  if (current.is_array() && IsTuple(value)) {
    current = value[kTuple];
  } else if (current.is_array() && value.is_array()) {
    current.insert(current.end(), value.begin(), value.end());
  } else if (IsDict(current) || current.is_array() || IsDict(value) || value.is_array()) {
    if (PyType(current) != PyType(value)) {
      return InvalidArgumentError(
          fmt::format("type mismatch for attr: `{}`. {} != {}", key, PyType(current), PyType(value)));
    }
  } else {
    // Primitives replace whatever primitive was there (an enum may be an int on one side and
    // its name on the other).
    current = value;
  }
  return OkStatus();
}

}  // namespace

std::string Put(std::string_view field) { return fmt::format("{}{}", kPut, field); }
std::string Join(std::string_view field, std::string_view on) { return fmt::format("{}{}:{}", kJoin, field, on); }
std::string Del(std::string_view field) { return fmt::format("{}{}", kDel, field); }

std::string FieldOf(std::string_view key) {
  if (StartsWith(key, kPut)) return std::string(key.substr(kPut.size()));
  if (StartsWith(key, kDel)) return std::string(key.substr(kDel.size()));
  if (StartsWith(key, kJoin)) {
    std::string_view rest = key.substr(kJoin.size());
    return std::string(rest.substr(0, rest.find(':')));
  }
  return std::string(key);
}

Status Apply(OrderedJson& base, const OrderedJson& overlay, bool resolve) {
  if (!base.is_object() || !overlay.is_object()) {
    return InvalidArgumentError(
        fmt::format("overlay: expected dicts to merge, got {} into {}", PyType(overlay), PyType(base)));
  }
  for (auto it = overlay.begin(); it != overlay.end(); ++it) {
    const std::string& key = it.key();
    const OrderedJson& value = it.value();
    std::string field = FieldOf(key);
    if (resolve) {
      if (StartsWith(key, kDel)) {
        RemoveFieldKeys(base, field, /*keep_plain=*/false);
        continue;
      }
      if (StartsWith(key, kPut)) {
        RemoveFieldKeys(base, field, /*keep_plain=*/false);
        base[field] = value;
        continue;
      }
      if (StartsWith(key, kJoin)) {
        TORCHX_RETURN_IF_ERROR(ResolveJoin(base, key, value, field));
        continue;
      }
    }
    // The last operation on a field wins: drop the other keys about it.
    RemoveFieldKeys(base, field, /*keep_plain=*/false, /*keep=*/key);
    TORCHX_RETURN_IF_ERROR(MergeValue(base, key, value, resolve));
  }
  return OkStatus();
}

void StripTupleMarkers(OrderedJson& v) {
  if (IsTuple(v)) {
    OrderedJson items = std::move(v[kTuple]);
    v = std::move(items);
  }
  if (v.is_object() || v.is_array()) {
    for (auto& child : v) StripTupleMarkers(child);
  }
}

OrderedJson Get(const OrderedJson& ns_value, std::string_view kind, bool flat_fallback) {
  if (!ns_value.is_object()) return OrderedJson::object();
  if (auto it = ns_value.find(kind); it != ns_value.end() && it->is_object()) return *it;
  if (auto marker = ns_value.find(kFormatKey); marker != ns_value.end() && *marker == true)
    return OrderedJson::object();
  if (!flat_fallback || ns_value.empty()) return OrderedJson::object();
  bool looks_nested = ns_value.size() > 1 &&
                      std::all_of(ns_value.begin(), ns_value.end(), [](const OrderedJson& v) { return v.is_object(); });
  return looks_nested ? OrderedJson::object() : ns_value;
}

Result<OrderedJson> LoadFile(std::string_view uri) {
  std::string_view path = uri;
  if (StartsWith(path, "file://")) {
    path.remove_prefix(7);
  } else if (size_t scheme = path.find("://"); scheme != std::string_view::npos) {
    return InvalidArgumentError(fmt::format(
        "overlay file `{}`: only local paths and file:// URIs are read here (use torchx.specs.overlays from "
        "Python with fsspec for `{}`)",
        uri, path.substr(0, scheme)));
  }
  std::ifstream in{std::string(path), std::ios::binary};
  if (!in) return NotFoundError(fmt::format("overlay file `{}`: cannot be read", uri));
  std::stringstream text;
  text << in.rdbuf();
  OrderedJson data = OrderedJson::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (data.is_discarded()) {
    TORCHX_ASSIGN_OR_RETURN(data, internal::YamlTextToJson(text.str(), fmt::format("overlay file `{}`", uri),
                                                           /*keep_tuples=*/true));
  }
  if (!data.is_object()) {
    return InvalidArgumentError(fmt::format("overlay file `{}` must contain a dict, got {}", uri, PyType(data)));
  }
  return data;
}

Status Validate(const OrderedJson& overlay, const std::vector<std::string>& blocklist, std::string_view overlay_name) {
  if (!overlay.is_object()) return OkStatus();
  std::vector<std::string> disallowed;
  for (auto it = overlay.begin(); it != overlay.end(); ++it) {
    std::string field = FieldOf(it.key());
    if (std::find(blocklist.begin(), blocklist.end(), field) != blocklist.end()) {
      disallowed.push_back(fmt::format("`{}.{}`", overlay_name, field));
    }
  }
  if (disallowed.empty()) return OkStatus();
  return InvalidArgumentError(
      fmt::format("disallowed overlay attributes {} since they can be set directly on the role's attributes.",
                  fmt::join(disallowed, ", ")));
}

}  // namespace torchx::specs::overlays
