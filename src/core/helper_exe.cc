#include "core/helper_exe.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

namespace torchx::internal {

namespace fs = std::filesystem;

Result<std::string> FindHelperExecutable(std::string_view name, const char* env_var, const char* build_path) {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv(env_var); env && *env) candidates.emplace_back(env);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(exe.parent_path() / name);
    candidates.push_back(exe.parent_path() / ".." / "libexec" / "torchx" / name);
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&FindHelperExecutable), &info) && info.dli_fname) {
    candidates.push_back(fs::path(info.dli_fname).parent_path() / name);
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
