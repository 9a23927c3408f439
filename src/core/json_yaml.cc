#include "core/json_yaml.h"

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

namespace torchx::internal {
namespace {

using Json = nlohmann::json;

// yaml-cpp writes strings holding control characters (a lone \r, say) as plain scalars, which
// its parser then reads back changed; such strings are quoted so that every character survives.
bool HasControlCharacter(const std::string& s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

bool NeedsQuotes(const std::string& s) { return HasControlCharacter(s) || !YamlPlainScalar(s).is_string(); }

template <typename J>
void Emit(YAML::Emitter& out, const J& j) {
  if (j.is_null()) {
    out << YAML::Null;
  } else if (j.is_boolean()) {
    out << j.template get<bool>();
  } else if (j.is_number()) {
    out << j.dump();
  } else if (j.is_string()) {
    const std::string& s = j.template get_ref<const std::string&>();
    if (NeedsQuotes(s)) out << YAML::DoubleQuoted;
    out << s;
  } else if (j.is_array()) {
    out << (j.empty() ? YAML::Flow : YAML::Block) << YAML::BeginSeq;
    for (const J& item : j) Emit(out, item);
    out << YAML::EndSeq;
  } else {
    out << (j.empty() ? YAML::Flow : YAML::Block) << YAML::BeginMap;
    for (const auto& [k, v] : j.items()) {
      out << YAML::Key;
      if (NeedsQuotes(k)) out << YAML::DoubleQuoted;
      out << k << YAML::Value;
      Emit(out, v);
    }
    out << YAML::EndMap;
  }
}

}  // namespace

Json YamlPlainScalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  auto parsed = Json::parse(s, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_discarded() && parsed.is_number()) return parsed;
  return s;
}

template <typename J>
std::string ToYaml(const J& j) {
  YAML::Emitter out;
  Emit(out, j);
  return std::string(out.c_str()) + "\n";
}

std::string JsonToYaml(const Json& j) { return ToYaml(j); }
std::string JsonToYaml(const nlohmann::ordered_json& j) { return ToYaml(j); }

}  // namespace torchx::internal
