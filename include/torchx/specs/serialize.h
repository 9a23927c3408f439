// The canonical JSON form of AppDef (and its YAML twin): the one format that crosses process and
// language boundaries (Python components hand their AppDef to the core in it, `--dryrun` prints
// it, the local scheduler stores it, and a spec file can be run from it).
//
// Canonical means: every field present, in a fixed order, with map keys sorted, so that
// AppDefToJson(AppDefFromJson(AppDefToJson(a))) == AppDefToJson(a) byte for byte.
// Reading is strict about names and types and lenient about absence: a missing field takes its
// default, while an unknown key or a wrong type is an error naming its path (roles[0].args[1])
// and, for unknown keys, the valid ones.
#pragma once

#include <string>
#include <string_view>

#include "torchx/specs/app_def.h"
#include "torchx/specs/named_resources.h"
#include "torchx/status.h"

namespace torchx::specs {

/// `indent` < 0 gives one compact line.
std::string AppDefToJson(const AppDef& app, int indent = 2);
/// A role's resource may be a name ("gpu.small"): looked up in the built-in table, then in
/// `resources` (plugins) when given. Same for the YAML and file readers.
Result<AppDef> AppDefFromJson(std::string_view json, const NamedResourceSource* resources = nullptr);

std::string AppDefToYaml(const AppDef& app);
/// YAML plain scalars take their YAML types (so `0.10` is the number 0.1); quote a value to
/// keep its exact text. Where a string is expected a plain number or bool is accepted as text.
Result<AppDef> AppDefFromYaml(std::string_view yaml, const NamedResourceSource* resources = nullptr);

/// One Resource in the same form as an AppDef role's "resource" (how plugins hand resources over).
std::string ResourceToJson(const Resource& r);
Result<Resource> ResourceFromJson(std::string_view json);

/// Reads a spec file, JSON or YAML by extension (.json; .yaml / .yml), errors naming the file.
Result<AppDef> AppDefFromFile(const std::string& path, const NamedResourceSource* resources = nullptr);

}  // namespace torchx::specs
