#include "torchx/components/finder.h"

#include <filesystem>

#include <fmt/format.h>

#include "components/function_component.h"
#include "components/python_component.h"
#include "torchx/components/declarative.h"
#include "torchx/specs/serialize.h"

namespace torchx::components {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

Result<ResolvedComponent> ResolveComponent(const ComponentRegistry& registry, std::string_view name) {
  ResolvedComponent out;
  if (auto c = registry.Find(name); c.has_value()) {
    out.component = *c;
    return out;
  }
  std::string path(name);
  std::error_code ec;
  bool is_file = std::filesystem::is_regular_file(path, ec);
  if (name.find(':') != std::string_view::npos && !is_file) {
    TORCHX_ASSIGN_OR_RETURN(out.owned, internal::LoadPythonComponent(name));
    out.component = out.owned.get();
    return out;
  }
  bool yaml = EndsWith(name, ".yaml") || EndsWith(name, ".yml");
  if (is_file && yaml && IsDeclarativeComponentFile(path)) {
    TORCHX_ASSIGN_OR_RETURN(out.owned, LoadDeclarativeComponent(path));
  } else if (is_file && (yaml || EndsWith(name, ".json"))) {
    TORCHX_ASSIGN_OR_RETURN(specs::AppDef app, specs::AppDefFromFile(path));
    ComponentSpec spec{path, fmt::format("AppDef spec file {}", path), "", {}, std::nullopt};
    out.owned = std::make_unique<internal::FunctionComponent>(
        std::move(spec), [app](const ComponentArgs&) -> Result<specs::AppDef> { return app; }, path);
  } else if (yaml || EndsWith(name, ".json")) {
    return NotFoundError(fmt::format("component file {}: cannot be read", path));
  } else {
    return registry.Find(name).status();
  }
  out.component = out.owned.get();
  return out;
}

}  // namespace torchx::components
