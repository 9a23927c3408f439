#include "components/builtins/builtins.h"

#include <cstdlib>

namespace torchx::components {

void RegisterBuiltinComponents(ComponentRegistry& registry) {
  internal::RegisterDistComponents(registry);
  internal::RegisterUtilsComponents(registry);
  internal::RegisterServeComponents(registry);
  internal::RegisterMetricsComponents(registry);
}

std::string internal::DefaultLogLevel() {
  const char* level = std::getenv("LOGLEVEL");
  return level ? level : "WARNING";
}

}  // namespace torchx::components
