#include "torchx/specs/macros.h"

#include <optional>

namespace torchx::specs::macros {
namespace {

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }

void SubstituteValue(const Values& v, Value& value) {
  if (value.is_string()) {
    value.as_string() = v.Substitute(value.as_string());
  } else if (value.is_list()) {
    for (Value& item : value.as_list()) SubstituteValue(v, item);
  } else if (value.is_map()) {
    for (auto& [_, item] : value.as_map()) SubstituteValue(v, item);
  }
}

}  // namespace

std::string Values::Substitute(std::string_view s) const {
  auto lookup = [this](std::string_view name) -> std::optional<std::string_view> {
    if (name == "img_root") return img_root;
    if (name == "app_id") return app_id;
    if (name == "replica_id") return replica_id;
    if (name == "rank0_env") return rank0_env;
    if (name == "base_img_root") return std::string_view("DEPRECATED");
    return std::nullopt;
  };
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c != '$' || i + 1 >= s.size()) {
      out += c;
      ++i;
      continue;
    }
    char next = s[i + 1];
    if (next == '$') {  // escaped dollar
      out += '$';
      i += 2;
      continue;
    }
    if (next == '{') {
      size_t close = s.find('}', i + 2);
      if (close != std::string_view::npos) {
        std::string_view name = s.substr(i + 2, close - i - 2);
        bool ident = !name.empty() && IsIdentStart(name[0]);
        for (char ch : name) ident = ident && IsIdentChar(ch);
        if (ident) {
          if (auto val = lookup(name)) {
            out += *val;
            i = close + 1;
            continue;
          }
        }
      }
      out += c;  // unknown or malformed braced placeholder: keep verbatim
      ++i;
      continue;
    }
    if (IsIdentStart(next)) {
      size_t end = i + 1;
      while (end < s.size() && IsIdentChar(s[end])) ++end;
      if (auto val = lookup(s.substr(i + 1, end - i - 1))) {
        out += *val;
        i = end;
        continue;
      }
    }
    out += c;
    ++i;
  }
  return out;
}

Role Values::Apply(const Role& role) const {
  Role out = role;
  for (std::string& arg : out.args) arg = Substitute(arg);
  for (auto& [_, val] : out.env) val = Substitute(val);
  for (auto& [_, val] : out.metadata) SubstituteValue(*this, val);
  return out;
}

}  // namespace torchx::specs::macros
