// Resolves what the user typed after `torchx run` to a component: a registered name
// (`dist.ddp`), a declarative component file (`./train.yaml`), or an AppDef spec file
// (`./app.json`, `./app.yaml`: a component with no parameters).
#pragma once

#include <memory>
#include <string_view>

#include "torchx/components/component.h"

namespace torchx::components {

struct ResolvedComponent {
  const Component* component = nullptr;  ///< points into the registry or at `owned`
  std::unique_ptr<Component> owned;      ///< set for components loaded from files
};

/// kNotFound ("did you mean", pointer to `torchx builtins`) for unknown names; file errors name
/// the file. `path.py:fn` and `pkg.module:fn` run in a Python child (components/python_component.h).
Result<ResolvedComponent> ResolveComponent(const ComponentRegistry& registry, std::string_view name);

}  // namespace torchx::components
