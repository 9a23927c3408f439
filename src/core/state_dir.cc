#include "core/state_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

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

bool CreatePrivateDirs(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
  // Missing parents get the default mode: they may be shared on purpose (a `log_dir` for a
  // team); only the directory itself is private.
  fs::path p(dir);
  std::error_code ec;
  if (p.has_parent_path() && p.parent_path() != p && !fs::create_directories(p.parent_path(), ec) && ec) {
    errno = ec.value();  // the reason the caller reports (a read-only file system, a file in the way)
    return false;
  }
  // mkdir's mode is masked by the umask, never widened: 0700 stays 0700 or narrower.
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return false;
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Status EnsurePrivateDir(const std::string& dir, std::string_view what) {
  std::string path = fs::path(dir).lexically_normal().string();
  if (!CreatePrivateDirs(path)) {
    return UnavailableError(fmt::format("{}: cannot create directory {}: {}", what, path, std::strerror(errno)));
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return UnavailableError(fmt::format("{}: cannot read {}: {}", what, path, std::strerror(errno)));
  }
  if (st.st_uid != ::geteuid()) {
    return FailedPreconditionError(fmt::format(
        "{}: {} belongs to another user (uid {}), who could change what runs next; set TORCHX_STATE_DIR to a "
        "directory of your own",
        what, path, st.st_uid));
  }
  if ((st.st_mode & 002) != 0) {
    return FailedPreconditionError(fmt::format(
        "{}: {} can be written by other users (mode {:04o}), who could change what runs next; run `chmod go-w {}` "
        "or set TORCHX_STATE_DIR to a directory of your own",
        what, path, st.st_mode & 07777, path));
  }
  // Group-writable and ours: what umask 002 (user-private groups) made before this directory
  // was created 0700. Narrowed rather than refused, so those users are not locked out.
  if ((st.st_mode & 020) != 0 && ::chmod(path.c_str(), st.st_mode & 07757) != 0) {
    return UnavailableError(fmt::format("{}: cannot chmod g-w {}: {}", what, path, std::strerror(errno)));
  }
  return OkStatus();
}

}  // namespace torchx::internal
