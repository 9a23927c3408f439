// torchx._torchx: the extension module. Everything here is conversion; see bindings.h.
#include <pybind11/pybind11.h>

#include "bindings.h"

PYBIND11_MODULE(_torchx, m) {
  m.doc() = "The C++ core of torchx (internal: use torchx.specs / torchx.runner)";
  m.attr("__version__") = TORCHX_VERSION;
  torchx::python::BindSpecs(m);
  torchx::python::BindComponents(m);
  torchx::python::BindRunner(m);
  torchx::python::BindPlugins(m);
}
