// Loading native plugins (plugins/plugin_abi.h) into a PluginRegistry.
#pragma once

#include <string>
#include <vector>

#include "torchx/plugins/plugin_abi.h"
#include "torchx/plugins/registry.h"

namespace torchx::plugins {

struct NativeLibrary {
  std::string path;
  void* handle = nullptr;  ///< never dlclose'd: registered callbacks point into it
};

/// $TORCHX_PLUGIN_PATH (':'-separated), then <dir of this executable>/../lib/torchx_plugins, then
/// `torchx_plugins` beside the shared object holding this code (the Python extension).
std::vector<std::string> DefaultNativePath();

/// Loads every `*.so` in each directory of `path` (or each listed library file) in name order,
/// recording failures in the registry as distinct kinds: dlopen, missing_symbol, struct_size,
/// abi_version, init. A missing directory is not an error.
void LoadNativePlugins(const std::vector<std::string>& path, PluginRegistry& registry,
                       std::vector<NativeLibrary>& loaded);

/// Adapters from the C descriptors (native_adapters.cc).
std::shared_ptr<const components::Component> MakeNativeComponent(const TorchxComponent& c, std::string origin,
                                                                 Status* error);
schedulers::SchedulerFactory MakeNativeSchedulerFactory(const TorchxScheduler& s);

}  // namespace torchx::plugins
