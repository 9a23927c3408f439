#include "errors.h"

#include <Python.h>

#include "torchx/runner/runner.h"

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

// The last plugin exception on this thread (the core calls plugins on the caller's thread) and
// the message its Status carries. Held as a raw reference: set and taken with the GIL held.
struct KeptError {
  PyObject* exception = nullptr;
  std::string message;
};
thread_local KeptError kept;

// The kept exception, if `status` is the failure it caused (the core may add context around the
// message); either way the slot is emptied, so a failure the core absorbed is never raised later.
py::object TakeKeptError(const Status& status) {
  KeptError k = std::exchange(kept, KeptError{});
  py::object exc = py::reinterpret_steal<py::object>(k.exception);
  if (!exc || status.message().find(k.message) == std::string::npos) return py::object();
  return exc;
}

}  // namespace

void KeepPluginError(py::error_already_set& e, std::string message) {
  Py_XDECREF(kept.exception);
  kept.exception = e.value().inc_ref().ptr();
  kept.message = std::move(message);
}

namespace {

// Raises `exc` (made by `cls`) carrying the status code's name.
[[noreturn]] void Raise(const py::object& cls, const py::object& exc, StatusCode code) {
  exc.attr("status_code") = py::str(std::string(StatusCodeName(code)));
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw py::error_already_set();
}

// The word after `prefix` in `message`, up to `end` (the name the runner's message puts there).
std::string After(const std::string& message, std::string_view prefix, char end) {
  size_t start = prefix.size();
  return message.substr(start, message.find(end, start) - start);
}

}  // namespace

void ThrowStatus(const Status& status, ErrorSite site) {
  if (py::object exc = TakeKeptError(status)) {
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    throw py::error_already_set();
  }
  const std::string& message = status.message();
  py::object exceptions = py::module_::import("torchx._exceptions");
  // TorchX's own classes for the two lookups the runner reports with a fixed message.
  if (status.code() == StatusCode::kNotFound && message.starts_with(runner::kUnknownSchedulerMessage)) {
    py::object cls = exceptions.attr("UnknownSchedulerException");
    Raise(cls, cls(After(message, runner::kUnknownSchedulerMessage, '`'), message), status.code());
  }
  if (status.code() == StatusCode::kNotFound && message.starts_with(runner::kUnknownAppLogMessage)) {
    py::object cls = exceptions.attr("UnknownAppException");
    Raise(cls, cls(After(message, runner::kUnknownAppLogMessage, ' ')), status.code());
  }
  std::string_view name = ExceptionFor(status.code(), site);
  py::object cls = name.starts_with("builtins.")
                       ? py::module_::import("builtins").attr(py::str(name.substr(9).data(), name.size() - 9))
                       : exceptions.attr(py::str(name.data(), name.size()));
  // The message alone, as TorchX's exceptions carry it; the code name stays available.
  Raise(cls, cls(message), status.code());
}

}  // namespace torchx::python
