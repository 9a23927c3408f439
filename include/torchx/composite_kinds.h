// Every composite kind (pipelines, sweeps, managed jobs, and kinds loaded as modules from
// $TORCHX_COMPOSITE_KINDS) behind three calls, so that the composition roots (the CLI, the
// dashboard's server, the composite driver, the Python module) and the launching verbs name none of
// them: a new kind is added in src/composite_kinds/ or as a module, nowhere at the edges
// (docs/architecture.md, "Adding a composite kind").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "torchx/composite/launch.h"
#include "torchx/config/torchx_config.h"
#include "torchx/plugins/registry.h"
#include "torchx/runner/runner.h"

namespace torchx {

/// Adds every composite kind's scheduler to `registry` (which must outlive what it builds). A kind
/// module that cannot be loaded is one of the registry's errors (`torchx plugins` shows it).
void RegisterCompositeKinds(plugins::PluginRegistry& registry);

/// The body of the composite driver for composite `id` of `kind` (the name its driver was started
/// with) under `state_dir`; `ready_fd` gets 'y' once the driver holds the composite's lock. Exit
/// code 2 (said on stderr) for a kind this process does not have.
int RunCompositeDriver(plugins::PluginRegistry& registry, std::string_view kind, const std::string& state_dir,
                       const std::string& id, int ready_fd);

/// Plans a composite of `request.kind` (every child built and dry-run; nothing submitted). The one
/// entry of `pipeline run`, `sweep run`, `run --managed`, `composite run` and Python's launches.
/// kInvalidArgument naming the kinds there are for an unknown kind.
Result<composite::PlannedComposite> PlanComposite(runner::Runner& runner, const config::TorchxConfig& config,
                                                  const composite::LaunchRequest& request);

/// The kinds this process has, linked in and loaded, in that order.
std::vector<std::string> CompositeKindNames();

}  // namespace torchx
