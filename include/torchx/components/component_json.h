// ComponentSpec <-> JSON, and ComponentArgs -> JSON: how a component's declaration and its parsed
// arguments cross into other languages. The Python package builds builtins' signatures from
// ComponentSpecToJson; a Python component file describes itself to the CLI with the inverse and
// receives its typed arguments as ComponentArgsToJson.
//
// Spec form: {"name", "summary", "description", "params": [{"name", "type" (str|int|float|bool|
// list|dict), "optional", "required", "default", "help"}], "varargs": {"name", "help"} | null}.
#pragma once

#include <string>
#include <string_view>

#include "torchx/components/component.h"
#include "torchx/status.h"

namespace torchx::components {

std::string ComponentSpecToJson(const ComponentSpec& spec);
/// Errors name the offending path (params[2].type) and, for types, the valid choices.
Result<ComponentSpec> ComponentSpecFromJson(std::string_view json);

/// {"values": {name: value}, "varargs": [...]}, values typed as declared (None as null).
std::string ComponentArgsToJson(const ComponentArgs& args);

}  // namespace torchx::components
