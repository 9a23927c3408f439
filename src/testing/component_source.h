// Test-only: a ComponentSource over a fixed list of components (the builtins by default), so
// component tests need no plugin registry.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "torchx/components/component.h"

namespace torchx::testing {

class ListComponentSource : public components::ComponentSource {
 public:
  explicit ListComponentSource(
      std::vector<std::shared_ptr<const components::Component>> components = components::BuiltinComponents())
      : components_(std::move(components)) {}

  std::shared_ptr<const components::Component> Find(std::string_view name) const override {
    for (const auto& c : components_) {
      if (c->spec().name == name) return c;
    }
    return nullptr;
  }
  std::vector<std::string> Names() const override {
    std::vector<std::string> names;
    for (const auto& c : components_) names.push_back(c->spec().name);
    return names;
  }

 private:
  std::vector<std::shared_ptr<const components::Component>> components_;
};

}  // namespace torchx::testing
