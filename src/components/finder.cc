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

Result<std::shared_ptr<const Component>> ResolveComponent(const ComponentSource& registry, std::string_view name,
                                                          const specs::NamedResourceSource* named_resources,
                                                          std::optional<std::chrono::milliseconds> python_timeout) {
  if (auto c = registry.Find(name)) return c;
  std::string path(name);
  std::error_code ec;
  bool is_file = std::filesystem::is_regular_file(path, ec);
  if (name.find(':') != std::string_view::npos && !is_file) {
    TORCHX_ASSIGN_OR_RETURN(auto python, internal::LoadPythonComponent(name, python_timeout));
    return std::shared_ptr<const Component>(std::move(python));
  }
  bool yaml = EndsWith(name, ".yaml") || EndsWith(name, ".yml");
  if (is_file && yaml && IsDeclarativeComponentFile(path)) {
    TORCHX_ASSIGN_OR_RETURN(auto declarative, LoadDeclarativeComponent(path));
    return std::shared_ptr<const Component>(std::move(declarative));
  }
  if (is_file && (yaml || EndsWith(name, ".json"))) {
    TORCHX_ASSIGN_OR_RETURN(specs::AppDef app, specs::AppDefFromFile(path, named_resources));
    ComponentSpec spec{path, fmt::format("AppDef spec file {}", path), "", {}, std::nullopt, ""};
    return std::shared_ptr<const Component>(std::make_shared<internal::FunctionComponent>(
        std::move(spec), [app](const ComponentArgs&, const BuildContext&) -> Result<specs::AppDef> { return app; },
        path));
  }
  if (yaml || EndsWith(name, ".json")) return NotFoundError(fmt::format("component file {}: cannot be read", path));
  return FindComponent(registry, name).status();
}

}  // namespace torchx::components
