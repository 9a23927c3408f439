#include "core/state_dir.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace torchx::internal {

namespace fs = std::filesystem;

std::string AbsoluteStateDir(const std::string& dir) {
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  return ec ? dir : p.lexically_normal().string();
}

std::string DefaultStateDir() {
  if (const char* d = std::getenv("TORCHX_STATE_DIR"); d && *d) return AbsoluteStateDir(d);
  if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x) return (fs::path(x) / "torchx").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : "/tmp") / ".local" / "state" / "torchx").string();
}

}  // namespace torchx::internal
