// Value <-> nlohmann JSON (either json or ordered_json), for the files that read and write
// free-form fields (serialize.cc, component_json.cc). Internal: the public headers stay free
// of the JSON library.
#pragma once

#include <cstdint>
#include <utility>

#include "torchx/value.h"

namespace torchx::internal {

template <typename Json>
Json ValueToJson(const Value& v) {
  if (v.is_null()) return nullptr;
  if (v.is_bool()) return v.as_bool();
  if (v.is_int()) return v.as_int();
  if (v.is_double()) return v.as_double();
  if (v.is_string()) return v.as_string();
  if (v.is_list()) {
    Json arr = Json::array();
    for (const Value& item : v.as_list()) arr.push_back(ValueToJson<Json>(item));
    return arr;
  }
  Json obj = Json::object();
  for (const auto& [k, item] : v.as_map()) obj[k] = ValueToJson<Json>(item);
  return obj;
}

template <typename Json>
Value ValueFromJson(const Json& v) {
  if (v.is_null()) return Value();
  if (v.is_boolean()) return Value(v.template get<bool>());
  if (v.is_number_integer()) {
    // Unsigned values above INT64_MAX keep their magnitude as a double rather than wrapping.
    if (v.is_number_unsigned() && v.template get<std::uint64_t>() > INT64_MAX) return Value(v.template get<double>());
    return Value(v.template get<std::int64_t>());
  }
  if (v.is_number()) return Value(v.template get<double>());
  if (v.is_string()) return Value(v.template get<std::string>());
  if (v.is_array()) {
    Value::List l;
    for (const Json& item : v) l.push_back(ValueFromJson(item));
    return Value(std::move(l));
  }
  Value::Map m;
  for (const auto& [k, item] : v.items()) m[k] = ValueFromJson(item);
  return Value(std::move(m));
}

}  // namespace torchx::internal
