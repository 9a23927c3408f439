#include "errors.h"

#include <Python.h>

namespace torchx::python {
namespace {

namespace py = pybind11;

// Returns the name of a class in torchx._exceptions (or a builtin, prefixed "builtins.").
const char* ExceptionFor(StatusCode code, ErrorSite site) {
  switch (site) {
    case ErrorSite::kAppHandle:
      if (code == StatusCode::kInvalidArgument) return "MalformedAppHandleException";
      break;
    case ErrorSite::kRunConfig:
      if (code == StatusCode::kInvalidArgument) return "InvalidRunConfigException";
      break;
    case ErrorSite::kComponent:
      if (code == StatusCode::kNotFound) return "ComponentNotFoundException";
      break;
    case ErrorSite::kNamedResource:
      if (code == StatusCode::kNotFound) return "builtins.KeyError";
      break;
    case ErrorSite::kGeneric:
      break;
  }
  switch (code) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kAlreadyExists:
      return "builtins.ValueError";
    case StatusCode::kNotFound:
      return "builtins.KeyError";
    case StatusCode::kDeadlineExceeded:
      return "builtins.TimeoutError";
    case StatusCode::kPermissionDenied:
      return "builtins.PermissionError";
    case StatusCode::kUnimplemented:
      return "builtins.NotImplementedError";
    case StatusCode::kUnavailable:
      return "builtins.ConnectionError";
    case StatusCode::kOk:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kCancelled:
    case StatusCode::kInternal:
      break;
  }
  return "builtins.RuntimeError";
}

}  // namespace

void ThrowStatus(const Status& status, ErrorSite site) {
  std::string_view name = ExceptionFor(status.code(), site);
  py::object cls;
  if (name.starts_with("builtins.")) {
    cls = py::module_::import("builtins").attr(py::str(name.substr(9).data(), name.size() - 9));
  } else {
    cls = py::module_::import("torchx._exceptions").attr(py::str(name.data(), name.size()));
  }
  // The message alone, as TorchX's exceptions carry it; the code name stays available.
  py::object exc = cls(status.message());
  exc.attr("status_code") = py::str(std::string(StatusCodeName(status.code())));
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw py::error_already_set();
}

}  // namespace torchx::python
