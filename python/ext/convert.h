// Conversions between Python values and core value types, shared by the binding files.
// Structured data (AppDef, AppStatus, runopts) crosses as canonical JSON text; only cfg values,
// which are small and typed, are converted element by element.
#pragma once

#include <string>

#include <pybind11/pybind11.h>

#include "torchx/specs/app_def.h"
#include "torchx/specs/runopts.h"

namespace torchx::python {

/// {"key": None | bool | int | float | str | list[str] | dict[str, str]} -> Cfg. TypeError naming
/// the key for anything else.
specs::Cfg CfgFromPy(const pybind11::handle& cfg);
pybind11::object CfgValToPy(const specs::CfgVal& v);
pybind11::dict CfgToPy(const specs::Cfg& cfg);

/// Mounts as the JSON list the AppDef form uses.
std::string MountsToJson(const std::vector<specs::Mount>& mounts);

}  // namespace torchx::python
