#include "container_engine/build_context.h"

#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/ignore_patterns.h"

namespace torchx::container_engine {
namespace {

namespace fs = std::filesystem;

// One ustar header (POSIX.1-1988): 512 bytes, octal fields, checksum over the header with the
// checksum field as spaces. Long names are split into prefix (155) + name (100) at a '/'.
Status AppendEntry(std::string& tar, const std::string& path, char type, const std::string& data, unsigned mode) {
  char h[512];
  std::memset(h, 0, sizeof h);
  std::string name = path, prefix;
  if (name.size() > 100) {
    size_t cut = name.rfind('/', 155);
    if (cut == std::string::npos || name.size() - cut - 1 > 100) {
      return InvalidArgumentError(fmt::format("workspace: path too long for the build context: {}", path));
    }
    prefix = name.substr(0, cut);
    name = name.substr(cut + 1);
  }
  std::memcpy(h, name.data(), name.size());
  std::snprintf(h + 100, 8, "%07o", mode & 07777);
  std::snprintf(h + 108, 8, "%07o", 0);
  std::snprintf(h + 116, 8, "%07o", 0);
  std::snprintf(h + 124, 12, "%011llo", static_cast<unsigned long long>(data.size()));
  std::snprintf(h + 136, 12, "%011o", 0);
  std::memset(h + 148, ' ', 8);
  h[156] = type;
  std::memcpy(h + 257, "ustar", 6);
  std::memcpy(h + 263, "00", 2);
  std::memcpy(h + 345, prefix.data(), prefix.size());
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  std::snprintf(h + 148, 8, "%06o", sum);
  h[155] = ' ';
  tar.append(h, sizeof h);
  tar += data;
  tar.append((512 - data.size() % 512) % 512, '\0');
  return OkStatus();
}

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

Result<BuildContext> MakeBuildContext(const std::string& workspace_in, const std::string& base_image) {
  std::string workspace = workspace_in.rfind("file://", 0) == 0 ? workspace_in.substr(7) : workspace_in;
  std::error_code ec;
  if (!fs::is_directory(workspace, ec)) {
    return InvalidArgumentError(fmt::format("workspace: {} is not a directory", workspace));
  }
  auto patterns = internal::ReadPatterns((fs::path(workspace) / ".dockerignore").string());
  BuildContext ctx;
  for (auto it = fs::recursive_directory_iterator(workspace, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    std::string rel = fs::relative(it->path(), workspace, ec).generic_string();
    // The Dockerfile the build names is always sent, whatever .dockerignore says (as TorchX).
    if (rel != "Dockerfile.torchx" && internal::IsIgnored(rel, patterns)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      TORCHX_RETURN_IF_ERROR(AppendEntry(ctx.tar, rel + "/", '5', "", st.st_mode));
    } else if (S_ISREG(st.st_mode)) {
      TORCHX_RETURN_IF_ERROR(AppendEntry(ctx.tar, rel, '0', ReadFile(it->path()), st.st_mode));
    }
  }
  if (fs::exists(fs::path(workspace) / "Dockerfile.torchx", ec)) {
    ctx.dockerfile = "Dockerfile.torchx";
  } else {
    ctx.dockerfile = ".torchx.generated.Dockerfile";
    std::string df = fmt::format("ARG IMAGE={}\nFROM $IMAGE\nCOPY . .\n", base_image);
    TORCHX_RETURN_IF_ERROR(AppendEntry(ctx.tar, ctx.dockerfile, '0', df, 0644));
  }
  ctx.tar.append(1024, '\0');  // end of archive
  return ctx;
}

}  // namespace torchx::container_engine
