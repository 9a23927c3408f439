#include "composite/document_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/state_dir.h"

namespace torchx::composite {
namespace {

namespace fs = std::filesystem;

Status StoreError(const std::string& kind, const std::string& what, int err) {
  return UnavailableError(fmt::format("{} store: {}: {}", kind, what, std::strerror(err)));
}

// Holds the store's lock file (flock: released if the holder dies).
class StoreLock {
 public:
  explicit StoreLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
    err_ = fd_ < 0 ? errno : 0;
  }
  ~StoreLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;
  Status status(const std::string& kind, const std::string& path) const {
    return fd_ >= 0 ? OkStatus() : StoreError(kind, "lock " + path, err_);
  }

 private:
  int fd_ = -1;
  int err_ = 0;
};

}  // namespace

Status DocumentStore::EnsureDir() const { return internal::EnsurePrivateDir(dir_, kind_ + " store"); }

std::string DocumentStore::PathOf(const std::string& id) const { return (fs::path(dir_) / (id + ".json")).string(); }

Status DocumentStore::Write(const std::string& id, const std::string& text) const {
  std::string path = PathOf(id);
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return StoreError(kind_, "write " + tmp, errno);
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return StoreError(kind_, "write " + tmp, err);
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return StoreError(kind_, "fsync " + tmp, err);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return StoreError(kind_, "rename " + tmp, err);
  }
  // The rename itself is durable only once the directory is: without this a power loss could
  // bring back an older record (a child "waiting" again that was already submitted).
  if (int dir = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
  return OkStatus();
}

Status DocumentStore::Create(const std::string& id, const std::string& text) {
  TORCHX_RETURN_IF_ERROR(EnsureDir());
  std::string lock_path = (fs::path(dir_) / ".lock").string();
  StoreLock lock(lock_path);
  TORCHX_RETURN_IF_ERROR(lock.status(kind_, lock_path));
  std::error_code ec;
  if (fs::exists(PathOf(id), ec))
    return AlreadyExistsError(fmt::format("{} store: {} {} already exists", kind_, kind_, id));
  return Write(id, text);
}

Result<std::optional<std::string>> DocumentStore::Read(const std::string& id) const {
  std::ifstream f(PathOf(id), std::ios::binary);
  if (!f) return std::optional<std::string>();
  std::stringstream buf;
  buf << f.rdbuf();
  return std::optional(buf.str());
}

Result<std::string> DocumentStore::Update(const std::string& id,
                                          const std::function<Result<std::string>(std::string)>& edit) {
  TORCHX_RETURN_IF_ERROR(EnsureDir());
  std::string lock_path = (fs::path(dir_) / ".lock").string();
  StoreLock lock(lock_path);
  TORCHX_RETURN_IF_ERROR(lock.status(kind_, lock_path));
  TORCHX_ASSIGN_OR_RETURN(auto text, Read(id));
  if (!text) return NotFoundError(fmt::format("{} {} does not exist", kind_, id));
  TORCHX_ASSIGN_OR_RETURN(std::string edited, edit(std::move(*text)));
  TORCHX_RETURN_IF_ERROR(Write(id, edited));
  return edited;
}

std::vector<std::string> DocumentStore::Ids() const {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const fs::path& p = entry.path();
    if (p.extension() == ".json") out.push_back(p.stem().string());
  }
  return out;
}

Status DocumentStore::Remove(const std::string& id) {
  std::string lock_path = (fs::path(dir_) / ".lock").string();
  StoreLock lock(lock_path);
  TORCHX_RETURN_IF_ERROR(lock.status(kind_, lock_path));
  if (::unlink(PathOf(id).c_str()) != 0 && errno != ENOENT) return StoreError(kind_, "remove " + PathOf(id), errno);
  for (const char* suffix : {".driver.log", ".driver.lock"}) {
    std::error_code ec;
    fs::remove(fs::path(dir_) / (id + suffix), ec);
  }
  return OkStatus();
}

}  // namespace torchx::composite
