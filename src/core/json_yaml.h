// JSON documents written as block YAML (dry-run manifests, AppDef YAML), with strings that a
// YAML reader would take for another type quoted, so the text reads back as the same JSON.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace torchx::internal {

/// Block-style YAML of `j`, keys in the JSON object's order, ending in a newline.
std::string JsonToYaml(const nlohmann::json& j);
std::string JsonToYaml(const nlohmann::ordered_json& j);

/// How a YAML 1.1/1.2-core reader types a plain (unquoted) scalar: null, bool, number or string.
nlohmann::json YamlPlainScalar(const std::string& s);

}  // namespace torchx::internal
