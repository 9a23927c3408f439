#include "schedulers/slurm/snapshot_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

namespace torchx::schedulers::slurm {
namespace {

namespace fs = std::filesystem;

// Touches older than this cannot be newer than any snapshot a reader would use.
constexpr double kTouchKeptFor = 600;

class MemorySnapshotStore final : public SnapshotStore {
 public:
  std::optional<QueueSnapshot> Read() override {
    std::lock_guard lock(data_mu_);
    return snapshot_;
  }
  Status Write(const QueueSnapshot& snapshot) override {
    std::lock_guard lock(data_mu_);
    snapshot_ = snapshot;
    return OkStatus();
  }
  Status Locked(const std::function<Status()>& fn) override {
    std::lock_guard lock(refresh_mu_);
    return fn();
  }
  void Touch(const std::string& job, double at) override {
    std::lock_guard lock(data_mu_);
    touched_[job] = at;
  }
  std::optional<double> TouchedAt(const std::string& job) override {
    std::lock_guard lock(data_mu_);
    auto it = touched_.find(job);
    if (it == touched_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::mutex refresh_mu_;
  std::mutex data_mu_;
  std::optional<QueueSnapshot> snapshot_;
  std::map<std::string, double> touched_;
};

// An fd closed when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::optional<std::string> ReadStoreFile(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream text;
  text << f.rdbuf();
  return text.str();
}

// Files <key>.snapshot, <key>.touched ("<job> <epoch>" lines) and <key>.lock (flock'd: a lock
// goes with its process, so a reader killed mid-refresh never leaves it held).
class FileSnapshotStore final : public SnapshotStore {
 public:
  explicit FileSnapshotStore(fs::path base) : base_(std::move(base)) {}

  std::optional<QueueSnapshot> Read() override {
    auto text = ReadStoreFile(Path(".snapshot"));
    if (!text) return std::nullopt;
    return SnapshotFromText(*text);
  }

  Status Write(const QueueSnapshot& snapshot) override {
    return WriteAtomically(Path(".snapshot"), SnapshotToText(snapshot));
  }

  Status Locked(const std::function<Status()>& fn) override {
    Fd lock(::open(Path(".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (lock.fd < 0)
      return UnavailableError(fmt::format("slurm: {}: {}", Path(".lock").string(), std::strerror(errno)));
    while (::flock(lock.fd, LOCK_EX) != 0) {
      if (errno != EINTR)
        return UnavailableError(fmt::format("slurm: lock {}: {}", Path(".lock").string(), std::strerror(errno)));
    }
    return fn();  // the lock goes with the fd
  }

  // Under the lock: a refresh reads touches while no submitter rewrites them.
  void Touch(const std::string& job, double at) override {
    (void)Locked([&]() -> Status {
      std::string kept;
      if (auto text = ReadStoreFile(Path(".touched"))) {
        std::istringstream in(*text);
        std::string name;
        double when = 0;
        while (in >> name >> when) {
          if (name != job && when > at - kTouchKeptFor) kept += fmt::format("{} {:.6f}\n", name, when);
        }
      }
      kept += fmt::format("{} {:.6f}\n", job, at);
      return WriteAtomically(Path(".touched"), kept);
    });
    cached_mtime_.reset();
  }

  std::optional<double> TouchedAt(const std::string& job) override {
    // Read again only when the file changed: readers ask once per job per turn.
    struct stat st {};
    if (::stat(Path(".touched").c_str(), &st) != 0) return std::nullopt;
    auto mtime = std::make_pair(st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    if (!cached_mtime_ || *cached_mtime_ != mtime || cached_size_ != st.st_size) {
      touched_.clear();
      if (auto text = ReadStoreFile(Path(".touched"))) {
        std::istringstream in(*text);
        std::string name;
        double when = 0;
        while (in >> name >> when) touched_[name] = when;
      }
      cached_mtime_ = mtime;
      cached_size_ = st.st_size;
    }
    auto it = touched_.find(job);
    if (it == touched_.end()) return std::nullopt;
    return it->second;
  }

 private:
  fs::path Path(const char* suffix) const { return fs::path(base_.string() + suffix); }

  static Status WriteAtomically(const fs::path& path, const std::string& text) {
    fs::path tmp = path.string() + fmt::format(".tmp.{}", ::getpid());
    {
      std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
      f << text;
      f.flush();
      if (!f) return UnavailableError(fmt::format("slurm: cannot write {}", tmp.string()));
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) {
      fs::remove(tmp, ec);
      return UnavailableError(fmt::format("slurm: cannot write {}: {}", path.string(), ec.message()));
    }
    return OkStatus();
  }

  fs::path base_;
  std::optional<std::pair<long, long>> cached_mtime_;
  off_t cached_size_ = 0;
  std::map<std::string, double> touched_;
};

// FNV-1a: a name that stays the same across builds and processes.
std::string StableHash(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

}  // namespace

std::shared_ptr<SnapshotStore> MakeMemorySnapshotStore() { return std::make_shared<MemorySnapshotStore>(); }

Result<std::shared_ptr<SnapshotStore>> MakeFileSnapshotStore(const std::string& dir, const std::string& cluster) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return UnavailableError(fmt::format("slurm: cannot make {}: {}", dir, ec.message()));
  ::chmod(dir.c_str(), 0700);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 022) != 0) {
    return FailedPreconditionError(
        fmt::format("slurm: {} is not a directory of this user's alone: the queue snapshot is not shared", dir));
  }
  return std::shared_ptr<SnapshotStore>(
      std::make_shared<FileSnapshotStore>(fs::path(dir) / fmt::format("squeue-{}", StableHash(cluster))));
}

std::string DefaultSnapshotDir() {
  if (const char* run = std::getenv("XDG_RUNTIME_DIR"); run && *run == '/') {
    std::error_code ec;
    if (fs::is_directory(run, ec)) return (fs::path(run) / "torchx" / "slurm").string();
  }
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  return (tmp / fmt::format("torchx-{}", ::getuid()) / "slurm").string();
}

std::shared_ptr<SnapshotStore> HostSnapshotStore() {
  const char* conf = std::getenv("SLURM_CONF");
  std::string cluster = conf && *conf ? conf : "default";
  std::string dir = DefaultSnapshotDir();
  // The parent <temp>/torchx-<uid> must be the user's too: made 0700 first.
  std::error_code ec;
  fs::path parent = fs::path(dir).parent_path();
  if (!fs::exists(parent, ec)) {
    fs::create_directories(parent, ec);
    ::chmod(parent.c_str(), 0700);
  }
  struct stat st {};
  bool parent_ok = ::stat(parent.c_str(), &st) == 0 && st.st_uid == ::getuid() && (st.st_mode & 022) == 0;
  if (parent_ok) {
    if (auto store = MakeFileSnapshotStore(dir, cluster); store.ok()) return *store;
  }
  static std::shared_ptr<SnapshotStore> process = MakeMemorySnapshotStore();
  return process;
}

}  // namespace torchx::schedulers::slurm
