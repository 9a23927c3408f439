// A Python scheduler object as one of the core's schedulers, in this process: the schedulers that
// torchx_plugins modules and entry points register, and the scheduler objects a Python Runner is
// given (TorchX's Runner(scheduler_factories=...)). The core's Runner drives it like any back-end
// (validation, TorchX's env, option resolution, waiting, cancel of live apps only, log checks);
// each call reaches the object through torchx.plugins._scheduler_adapter.SchedulerAdapter, which
// runs the object's own TorchX hooks. Calls cross with the GIL held; an exception the object
// raises fails the call and is raised again, unchanged, by the binding (KeepPluginError).
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "torchx/schedulers/scheduler.h"

namespace torchx::python {

/// Builds the scheduler `name` by calling `make_adapter(session_name)`, which returns a
/// SchedulerAdapter around the Python scheduler object.
schedulers::SchedulerFactory PyObjectSchedulerFactory(std::string name, pybind11::object make_adapter);

}  // namespace torchx::python
