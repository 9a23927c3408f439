// Internal: reads an AppDef from an already-loaded YAML node (declarative components template the
// node, then hand it here). Included only by .cc files: yaml-cpp stays out of public headers.
#pragma once

#include <string_view>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json_fwd.hpp>

#include "torchx/specs/app_def.h"
#include "torchx/specs/named_resources.h"
#include "torchx/status.h"

namespace torchx::specs::internal {

Result<AppDef> AppDefFromYamlNode(const YAML::Node& root, const NamedResourceSource* resources = nullptr);

/// A YAML (or JSON) document as JSON; kInvalidArgument naming `what` when it does not parse.
/// `keep_tuples`: a `!!python/tuple` sequence becomes `{"__torchx_tuple__": [...]}` (overlays).
Result<nlohmann::ordered_json> YamlTextToJson(std::string_view text, std::string_view what, bool keep_tuples = false);

/// A file's document that must be a mapping (a pipeline or sweep file): YamlTextToJson, then
/// kInvalidArgument saying what it `must_be` when it is not one; errors name `origin`.
Result<nlohmann::ordered_json> YamlMappingFromText(std::string_view text, const std::string& origin,
                                                   std::string_view must_be);

}  // namespace torchx::specs::internal
