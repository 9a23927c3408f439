// The one place where core Status codes become the Python exceptions TorchX users catch.
//
// The same code means different things at different call sites (an INVALID_ARGUMENT from handle
// parsing is MalformedAppHandleException, from cfg resolution InvalidRunConfigException, from an
// AppDef plain ValueError), so each bound call names its ErrorSite and the table in errors.cc
// picks the class. Exception classes live in torchx/_exceptions.py.
#pragma once

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

/// Raises the Python exception for `status` (which must not be OK).
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
