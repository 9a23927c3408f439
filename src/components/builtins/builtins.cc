#include "components/builtins/builtins.h"

#include <algorithm>
#include <cstdlib>

namespace torchx::components {

std::vector<std::shared_ptr<const Component>> BuiltinComponents() {
  std::vector<std::shared_ptr<const Component>> out;
  internal::AddDistComponents(out);
  internal::AddUtilsComponents(out);
  internal::AddServeComponents(out);
  internal::AddMetricsComponents(out);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a->spec().name < b->spec().name; });
  return out;
}

std::string internal::DefaultLogLevel() {
  const char* level = std::getenv("LOGLEVEL");
  return level ? level : "WARNING";
}

}  // namespace torchx::components
