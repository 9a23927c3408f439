// Internal: one function per builtin module, adding its components to `out`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "torchx/components/component.h"

namespace torchx::components::internal {

void AddDistComponents(std::vector<std::shared_ptr<const Component>>& out);
void AddUtilsComponents(std::vector<std::shared_ptr<const Component>>& out);
void AddServeComponents(std::vector<std::shared_ptr<const Component>>& out);
void AddMetricsComponents(std::vector<std::shared_ptr<const Component>>& out);

/// LOGLEVEL default of TorchX's components: the caller's $LOGLEVEL, else WARNING.
std::string DefaultLogLevel();

}  // namespace torchx::components::internal
