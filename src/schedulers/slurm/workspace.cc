#include "schedulers/slurm/workspace.h"

#include <fstream>

#include <fmt/format.h>

namespace torchx::schedulers::slurm {

namespace fs = std::filesystem;

Status CopyWorkspace(const fs::path& workspace, const std::string& job_dir) {
  std::error_code ec;
  fs::path dst = fs::absolute(job_dir, ec);
  if (fs::exists(dst, ec)) {
    return AlreadyExistsError(fmt::format("job_dir: {} already exists; give a new directory (it is created)", job_dir));
  }
  std::vector<std::string> patterns;
  {
    std::ifstream f(workspace / ".torchxignore");
    for (std::string line; std::getline(f, line);) patterns.push_back(line);
  }
  fs::create_directories(dst, ec);
  if (ec) return InternalError(fmt::format("job_dir: cannot create {}: {}", job_dir, ec.message()));
  fs::path src = fs::canonical(workspace, ec);
  fs::path dst_canon = fs::canonical(dst, ec);
  for (auto it = fs::recursive_directory_iterator(src, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const fs::path& p = it->path();
    std::string rel = fs::relative(p, src, ec).generic_string();
    bool inside_dst = p == dst_canon;
    if (inside_dst || IsIgnored(rel, patterns)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    fs::path target = dst / rel;
    if (it->is_directory(ec)) {
      fs::create_directories(target, ec);
    } else if (it->is_regular_file(ec) || it->is_symlink(ec)) {
      fs::copy(p, target, fs::copy_options::copy_symlinks | fs::copy_options::overwrite_existing, ec);
      if (ec) return InternalError(fmt::format("job_dir: cannot copy {}: {}", rel, ec.message()));
    }
  }
  return OkStatus();
}

}  // namespace torchx::schedulers::slurm
