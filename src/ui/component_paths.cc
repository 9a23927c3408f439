#include "ui/component_paths.h"

#include <algorithm>
#include <filesystem>
#include <string>

#include <fmt/format.h>

namespace torchx::ui {
namespace {

// The file the finder loads (components/finder.cc): the whole name where it is a file (a path
// may hold a ':'), else the part before the function's `:`.
std::string_view FilePart(std::string_view name) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(std::filesystem::path(name), ec)) return name;
  size_t colon = name.rfind(':');
  return colon == std::string_view::npos ? name : name.substr(0, colon);
}

bool Within(const std::filesystem::path& p, const std::filesystem::path& root) {
  auto [r, q] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
  return r == root.end() || (std::next(r) == root.end() && r->empty());  // "root/" ends in an empty part
}

}  // namespace

bool NamesComponentFile(std::string_view name) {
  std::string_view file = FilePart(name);
  return file.find('/') != std::string_view::npos || file.ends_with(".py") || file.ends_with(".yaml") ||
         file.ends_with(".yml") || file.ends_with(".json");
}

bool LoadsComponentCode(std::string_view name) {
  // `module:fn` imports the module, from the server's directory too (the bridge's sys.path).
  return NamesComponentFile(name) || name.find(':') != std::string_view::npos;
}

Status CheckComponentPath(std::string_view name, const std::vector<std::filesystem::path>& roots) {
  if (!NamesComponentFile(name)) return OkStatus();
  std::error_code ec;
  std::filesystem::path file = std::filesystem::weakly_canonical(std::filesystem::absolute(FilePart(name)), ec);
  if (ec) return PermissionDeniedError(fmt::format("component file `{}`: {}", FilePart(name), ec.message()));
  std::string allowed;
  for (const std::filesystem::path& root : roots) {
    std::filesystem::path r = std::filesystem::weakly_canonical(root, ec);
    if (ec) continue;
    if (Within(file, r)) return OkStatus();
    allowed += (allowed.empty() ? "" : ", ") + r.string();
  }
  return PermissionDeniedError(fmt::format(
      "component file `{}` is outside the directories the dashboard loads components from ({}); start `torchx ui` "
      "with --component_dir DIR to allow another",
      file.string(), allowed));
}

}  // namespace torchx::ui
