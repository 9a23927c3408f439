// Resolves what the user typed after `torchx run` to a component: a registered name
// (`dist.ddp`), a declarative component file (`./train.yaml`), or an AppDef spec file
// (`./app.json`, `./app.yaml`: a component with no parameters).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string_view>

#include "torchx/components/component.h"

namespace torchx::components {

/// A name registered in `registry` (builtins and plugins), else a file. kNotFound ("did you
/// mean", pointer to `torchx builtins`) for unknown names; file errors name the file. Spec files
/// read their named resources from `named_resources` too. `path.py:fn` and `pkg.module:fn` run in a
/// Python child (components/python_component.h), each call of which `python_timeout` bounds
/// where given (kDeadlineExceeded; the dashboard's limit, as a file runs at import).
Result<std::shared_ptr<const Component>> ResolveComponent(
    const ComponentSource& registry, std::string_view name, const specs::NamedResourceSource* named_resources = nullptr,
    std::optional<std::chrono::milliseconds> python_timeout = std::nullopt);

}  // namespace torchx::components
