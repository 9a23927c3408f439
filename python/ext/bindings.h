// Registration functions, one per binding file, called from module.cc with the module's
// registry (the Python package's composition root).
#pragma once

#include <pybind11/pybind11.h>

#include "torchx/plugins/registry.h"

namespace torchx::python {

void BindSpecs(pybind11::module_& m, plugins::PluginRegistry& registry);
void BindComponents(pybind11::module_& m, plugins::PluginRegistry& registry);
void BindRunner(pybind11::module_& m, plugins::PluginRegistry& registry);
void BindPlugins(pybind11::module_& m, plugins::PluginRegistry& registry);
void BindWorkspace(pybind11::module_& m);

}  // namespace torchx::python
