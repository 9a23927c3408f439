// Reading JSON that comes from outside the process (engine answers, payloads a user or Python
// edited) without exceptions. nlohmann's accessors throw on a missing key (at), a value of
// another type (value, get) or a non-object (value): such an answer must become a clear Status,
// never an exception across the Status boundary. A JsonView is a value that is missing, or one
// of the document's nodes; every accessor returns its fallback for anything else. Include it only
// in .cc files (it brings nlohmann/json.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace torchx::internal {

class JsonView {
 public:
  JsonView() = default;
  /// A view of `j`, which must outlive the view (and every view taken from it).
  JsonView(const nlohmann::json& j) : node_(&j) {}  // NOLINT: implicit, views are cheap

  /// Parses `text` into a document the view (and views taken from it) keep alive; text that is
  /// not JSON gives a missing view.
  static JsonView Parse(std::string_view text) {
    auto doc = std::make_shared<const nlohmann::json>(nlohmann::json::parse(text, nullptr, false));
    if (doc->is_discarded()) return {};
    JsonView v;
    v.doc_ = doc;
    v.node_ = doc.get();
    return v;
  }

  /// The member `key` of an object; missing for anything else.
  JsonView operator[](std::string_view key) const {
    if (!node_ || !node_->is_object()) return Missing();
    auto it = node_->find(key);
    return it == node_->end() ? Missing() : Child(&*it);
  }
  /// Element `i` of an array; missing for anything else.
  JsonView operator[](size_t i) const {
    if (!node_ || !node_->is_array() || i >= node_->size()) return Missing();
    return Child(&(*node_)[i]);
  }

  bool Exists() const { return node_ != nullptr; }
  bool IsObject() const { return node_ && node_->is_object(); }
  bool IsArray() const { return node_ && node_->is_array(); }
  bool IsString() const { return node_ && node_->is_string(); }

  std::string Str(std::string fallback = {}) const {
    return node_ && node_->is_string() ? node_->get_ref<const std::string&>() : fallback;
  }
  /// An integer, or a float with no fractional part that fits; else `fallback`.
  std::int64_t Int(std::int64_t fallback = 0) const {
    if (!node_) return fallback;
    if (node_->is_number_integer()) return node_->get<std::int64_t>();
    if (node_->is_number_unsigned()) {
      auto u = node_->get<std::uint64_t>();
      return u <= static_cast<std::uint64_t>(INT64_MAX) ? static_cast<std::int64_t>(u) : fallback;
    }
    if (node_->is_number_float()) {
      double d = node_->get<double>();
      if (d >= -9.2e18 && d <= 9.2e18 && d == static_cast<double>(static_cast<std::int64_t>(d))) {
        return static_cast<std::int64_t>(d);
      }
    }
    return fallback;
  }
  bool Bool(bool fallback = false) const { return node_ && node_->is_boolean() ? node_->get<bool>() : fallback; }

  /// The elements of an array (none for anything else).
  std::vector<JsonView> Items() const {
    std::vector<JsonView> out;
    if (!node_ || !node_->is_array()) return out;
    out.reserve(node_->size());
    for (const nlohmann::json& item : *node_) out.push_back(Child(&item));
    return out;
  }
  /// The node itself; nullptr when missing.
  const nlohmann::json* get() const { return node_; }

 private:
  JsonView Missing() const {
    JsonView v;
    v.doc_ = doc_;
    return v;
  }
  JsonView Child(const nlohmann::json* node) const {
    JsonView v;
    v.doc_ = doc_;
    v.node_ = node;
    return v;
  }

  std::shared_ptr<const nlohmann::json> doc_;  // set when the view owns its document (Parse)
  const nlohmann::json* node_ = nullptr;
};

/// At most `max` bytes of `body`, for messages that quote what an engine answered.
inline std::string Excerpt(std::string_view body, size_t max = 200) {
  if (body.size() <= max) return std::string(body);
  return std::string(body.substr(0, max)) + "...";
}

}  // namespace torchx::internal
