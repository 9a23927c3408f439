// The one place where core Status codes become the Python exceptions TorchX users catch.
//
// The same code means different things at different call sites (an INVALID_ARGUMENT from handle
// parsing is MalformedAppHandleException, from cfg resolution InvalidRunConfigException, from an
// AppDef plain ValueError), so each bound call names its ErrorSite and the table in errors.cc
// picks the class. Exception classes live in torchx/_exceptions.py.
#pragma once

#include <string>
#include <utility>

#include <pybind11/pybind11.h>

#include "torchx/status.h"

namespace torchx::python {

enum class ErrorSite {
  kGeneric,    ///< specs, runner calls
  kAppHandle,  ///< parsing an app handle
  kRunConfig,  ///< resolving a scheduler cfg
  kComponent,  ///< finding or calling a component
  kNamedResource,
};

/// Keeps the exception a Python plugin raised inside a core call (the call then fails with a
/// Status carrying its message), so that the status is raised as the plugin's own exception, as
/// TorchX's Runner lets it through. Call with the GIL held, while `e` is being handled.
void KeepPluginError(pybind11::error_already_set& e, std::string message);

/// Raises the Python exception for `status` (which must not be OK): a kept plugin exception whose
/// message the status carries, else the class ErrorSite picks.
[[noreturn]] void ThrowStatus(const Status& status, ErrorSite site = ErrorSite::kGeneric);

inline void ThrowIfError(const Status& status, ErrorSite site = ErrorSite::kGeneric) {
  if (!status.ok()) ThrowStatus(status, site);
}

template <typename T>
T ValueOrThrow(Result<T> result, ErrorSite site = ErrorSite::kGeneric) {
  if (!result.has_value()) ThrowStatus(result.error(), site);
  return std::move(*result);
}

}  // namespace torchx::python
