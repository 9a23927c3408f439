// Internal: registering a loadable back-end (schedulers/backend_module.h) without loading it.
#pragma once

#include "torchx/plugins/registry.h"

namespace torchx::plugins {

/// Adds one factory per scheduler of `backend` (a module); the first one built loads the module
/// from BackendModulePath(). A module that is missing, from another build, or not a back-end
/// makes those factories fail with kFailedPrecondition saying why and where it looked.
void AddLoadableBackend(PluginRegistry& registry, const BuiltinBackend& backend);

}  // namespace torchx::plugins
