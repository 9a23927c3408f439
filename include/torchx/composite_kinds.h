// Every composite kind (pipelines, sweeps, managed jobs) behind two calls, so that the composition
// roots (the CLI, the dashboard's server, the composite driver, the Python module) name none of
// them: a new kind is added here and nowhere at the edges (docs/architecture.md, "Adding a
// composite kind").
#pragma once

#include <string>
#include <string_view>

#include "torchx/plugins/registry.h"

namespace torchx {

/// Adds every composite kind's scheduler to `registry` (which must outlive what it builds).
void RegisterCompositeKinds(plugins::PluginRegistry& registry);

/// The body of the composite driver for composite `id` of `kind` (the name its driver was started
/// with) under `state_dir`; `ready_fd` gets 'y' once the driver holds the composite's lock. Exit
/// code 2 (said on stderr) for a kind this build does not have.
int RunCompositeDriver(plugins::PluginRegistry& registry, std::string_view kind, const std::string& state_dir,
                       const std::string& id, int ready_fd);

}  // namespace torchx
