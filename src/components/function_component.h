// Internal: a Component made of a declaration and a build function, and helpers to declare
// parameters tersely. Builtins and declarative files both use it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "torchx/components/component.h"

namespace torchx::components::internal {

using BuildFn = std::function<Result<specs::AppDef>(const ComponentArgs&, const BuildContext&)>;

class FunctionComponent : public Component {
 public:
  FunctionComponent(ComponentSpec spec, BuildFn build, std::string origin = "builtin")
      : spec_(std::move(spec)), build_(std::move(build)), origin_(std::move(origin)) {}
  const ComponentSpec& spec() const override { return spec_; }
  Result<specs::AppDef> Build(const ComponentArgs& args, const BuildContext& context) const override {
    return build_(args, context);
  }
  std::string origin() const override { return origin_; }

 private:
  ComponentSpec spec_;
  BuildFn build_;
  std::string origin_;
};

/// A required parameter.
inline Param Required(std::string name, ParamType type, std::string help) {
  return Param{std::move(name), type, false, std::nullopt, std::move(help)};
}
/// A parameter with a default.
inline Param WithDefault(std::string name, ParamType type, Value def, std::string help) {
  return Param{std::move(name), type, false, std::move(def), std::move(help)};
}
/// An Optional[T] parameter defaulting to None.
inline Param OptionalNone(std::string name, ParamType type, std::string help) {
  return Param{std::move(name), type, true, Value(), std::move(help)};
}
inline Param VarArgs(std::string name, std::string help) {
  return Param{std::move(name), ParamType::kStr, false, std::nullopt, std::move(help)};
}

}  // namespace torchx::components::internal
