#include "core/helper_exe.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "core/install_layout.h"

namespace torchx::internal {

namespace fs = std::filesystem;

std::optional<SelfImage> FindSelfImage() {
  // The link map names the object holding this function: a shared object's path as it was
  // opened, or "" for the main program (whose dladdr file name is only argv[0]).
  Dl_info info{};
  link_map* map = nullptr;
  std::error_code ec;
  if (dladdr1(reinterpret_cast<void*>(&FindSelfImage), &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) != 0 &&
      map && map->l_name && *map->l_name) {
    // The extension's own file even when it cannot be resolved further: never the interpreter.
    fs::path so = fs::absolute(map->l_name, ec);
    fs::path resolved = fs::weakly_canonical(so, ec);
    return SelfImage{ec ? so : resolved, false};
  }
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  return SelfImage{exe, true};
}

std::vector<fs::path> PackageDirs() {
  std::vector<fs::path> dirs;
  std::optional<SelfImage> self = FindSelfImage();
  if (!self) return dirs;
  fs::path own = self->path.parent_path();
  dirs.push_back(own);
  // A back-end module (torchx/backends/*.so) holds its own copy of this code: its package is the
  // directory above.
  if (!self->main_program && own.filename() == "backends") dirs.push_back(own.parent_path());
  constexpr std::string_view kPythonDir = TORCHX_WHEEL_PYTHON_DIR;
  if (!self->main_program || kPythonDir.empty()) return dirs;
  // A wheel's scripts are installed in <prefix>/bin and its package in the scheme's platlib; pip's
  // schemes put that at one of these below the same prefix (a venv, --user, /usr/local).
  for (const char* lib : {"lib", "lib64"}) {
    for (const char* packages : {"site-packages", "dist-packages"}) {
      fs::path dir = (own / ".." / lib / kPythonDir / packages / "torchx").lexically_normal();
      std::error_code ec;
      if (fs::is_directory(dir, ec)) dirs.push_back(std::move(dir));
    }
  }
  return dirs;
}

Result<std::string> FindHelperExecutable(std::string_view name, const char* env_var, const char* build_path) {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv(env_var); env && *env) candidates.emplace_back(env);
  if (std::optional<SelfImage> self = FindSelfImage()) {
    for (const fs::path& dir : PackageDirs()) candidates.push_back(dir / name);
    if (self->main_program) candidates.push_back(self->path.parent_path() / ".." / "libexec" / "torchx" / name);
  }
  if (build_path && *build_path) candidates.emplace_back(build_path);
  for (const fs::path& c : candidates) {
    if (::access(c.c_str(), X_OK) == 0) return c.lexically_normal().string();
  }
  if (const char* path = std::getenv("PATH")) {
    std::string p(path);
    size_t start = 0;
    while (start <= p.size()) {
      size_t colon = p.find(':', start);
      if (colon == std::string::npos) colon = p.size();
      fs::path c = fs::path(p.substr(start, colon - start)) / name;
      if (colon > start && ::access(c.c_str(), X_OK) == 0) return c.string();
      start = colon + 1;
    }
  }
  return FailedPreconditionError(fmt::format(
      "cannot find the {} executable (looked next to this program, in the build tree and on PATH); set {} to its path",
      name, env_var));
}

}  // namespace torchx::internal
