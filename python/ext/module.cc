// torchx._torchx: the extension module. Everything here is conversion; see bindings.h.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "torchx/composite_kinds.h"
#include "torchx/version.h"

PYBIND11_MODULE(_torchx, m) {
  m.doc() = "The C++ core of torchx (internal: use torchx.specs / torchx.runner)";
  m.attr("__version__") = TORCHX_VERSION_STRING;
  // The composition root of the Python package: one registry, built here and handed to every
  // binding (the Python plugin provider joins it from torchx._core). It is never destroyed: it
  // holds Python objects (plugin factories) that must not be released after the interpreter has
  // finalized, and native plugin code that stays loaded until exit.
  auto* registry = new torchx::plugins::PluginRegistry();
  torchx::plugins::RegisterBuiltins(*registry);
  torchx::RegisterCompositeKinds(*registry);
  torchx::python::BindSpecs(m, *registry);
  torchx::python::BindComponents(m, *registry);
  torchx::python::BindRunner(m, *registry);
  torchx::python::BindPlugins(m, *registry);
  torchx::python::BindWorkspace(m);
}
