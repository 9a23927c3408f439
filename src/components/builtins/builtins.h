// Internal: one registration function per builtin module.
#pragma once

#include "torchx/components/component.h"

namespace torchx::components::internal {

void RegisterDistComponents(ComponentRegistry& registry);
void RegisterUtilsComponents(ComponentRegistry& registry);
void RegisterServeComponents(ComponentRegistry& registry);
void RegisterMetricsComponents(ComponentRegistry& registry);

/// LOGLEVEL default of TorchX's components: the caller's $LOGLEVEL, else WARNING.
std::string DefaultLogLevel();

}  // namespace torchx::components::internal
