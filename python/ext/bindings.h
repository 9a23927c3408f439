// Registration functions, one per binding file, called from module.cc.
#pragma once

#include <pybind11/pybind11.h>

namespace torchx::python {

void BindSpecs(pybind11::module_& m);
void BindComponents(pybind11::module_& m);
void BindRunner(pybind11::module_& m);
void BindPlugins(pybind11::module_& m);

}  // namespace torchx::python
