// Test-only: a plugin registry as the CLI's main builds one (built-ins, native plugins from the
// default path: $TORCHX_PLUGIN_PATH, ...), owned by the test.
#pragma once

#include <memory>

#include "torchx/plugins/registry.h"

namespace torchx::testing {

inline std::unique_ptr<plugins::PluginRegistry> BuiltinRegistry(plugins::PluginRegistry::Options options = {}) {
  auto registry = std::make_unique<plugins::PluginRegistry>(std::move(options));
  plugins::RegisterBuiltins(*registry);
  return registry;
}

}  // namespace torchx::testing
