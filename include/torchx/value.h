// Value: a JSON-shaped value (null, bool, int, float, string, list, map) for the free-form fields
// of the job model: Role.metadata, Resource.capabilities and Resource.tags, which TorchX types as
// dict[str, Any]. Kept here, small, so that spec headers do not pull a JSON library into every
// translation unit; serialize.cc converts to and from nlohmann::json.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace torchx {

class Value {
 public:
  using List = std::vector<Value>;
  using Map = std::map<std::string, Value>;  // sorted: gives the canonical key order

  Value() = default;
  Value(std::nullptr_t) {}                            // NOLINT
  Value(bool b) : v_(b) {}                            // NOLINT
  Value(int i) : v_(static_cast<std::int64_t>(i)) {}  // NOLINT
  Value(std::int64_t i) : v_(i) {}                    // NOLINT
  Value(double d) : v_(d) {}                          // NOLINT
  Value(const char* s) : v_(std::string(s)) {}        // NOLINT
  Value(std::string s) : v_(std::move(s)) {}          // NOLINT
  Value(List l) : v_(std::move(l)) {}                 // NOLINT
  Value(Map m) : v_(std::move(m)) {}                  // NOLINT

  bool is_null() const { return std::holds_alternative<std::nullptr_t>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_int() const { return std::holds_alternative<std::int64_t>(v_); }
  bool is_double() const { return std::holds_alternative<double>(v_); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_list() const { return std::holds_alternative<List>(v_); }
  bool is_map() const { return std::holds_alternative<Map>(v_); }

  // REQUIRES: the matching is_*() is true.
  bool as_bool() const { return std::get<bool>(v_); }
  std::int64_t as_int() const { return std::get<std::int64_t>(v_); }
  double as_double() const { return std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  std::string& as_string() { return std::get<std::string>(v_); }
  const List& as_list() const { return std::get<List>(v_); }
  List& as_list() { return std::get<List>(v_); }
  const Map& as_map() const { return std::get<Map>(v_); }
  Map& as_map() { return std::get<Map>(v_); }

  friend bool operator==(const Value& a, const Value& b) { return a.v_ == b.v_; }

 private:
  std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, List, Map> v_{nullptr};
};

}  // namespace torchx
