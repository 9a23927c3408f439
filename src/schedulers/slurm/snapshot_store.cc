#include "schedulers/slurm/snapshot_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <tuple>

#include <fmt/format.h>

namespace torchx::schedulers::slurm {
namespace {

namespace fs = std::filesystem;

// Touches older than this cannot be newer than any snapshot a reader would use (status_interval
// is at most 600 s).
constexpr double kTouchKeptFor = 600;
// How long a refresh waits for another's squeue (its timeout is 60 s) before asking alone, and a
// submission's touch for the lock.
constexpr std::chrono::milliseconds kRefreshWait(65'000);
constexpr std::chrono::milliseconds kTouchWait(5'000);

std::optional<double> LatestOf(const std::map<std::string, double>& touched) {
  std::optional<double> latest;
  for (const auto& [job, at] : touched) {
    if (!latest || at > *latest) latest = at;
  }
  return latest;
}

class MemorySnapshotStore final : public SnapshotStore {
 public:
  std::optional<QueueSnapshot> Read(SnapshotKind kind) override {
    std::lock_guard lock(data_mu_);
    auto it = snapshots_.find(kind);
    if (it == snapshots_.end()) return std::nullopt;
    return it->second;
  }
  Status Write(SnapshotKind kind, const QueueSnapshot& snapshot) override {
    std::lock_guard lock(data_mu_);
    snapshots_[kind] = snapshot;
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
  std::optional<double> LastTouch() override {
    std::lock_guard lock(data_mu_);
    return LatestOf(touched_);
  }

 private:
  std::mutex refresh_mu_;
  std::mutex data_mu_;
  std::map<SnapshotKind, QueueSnapshot> snapshots_;
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

  std::optional<QueueSnapshot> Read(SnapshotKind kind) override {
    auto text = ReadStoreFile(Path(FileOf(kind)));
    if (!text) return std::nullopt;
    return SnapshotFromText(*text);
  }

  Status Write(SnapshotKind kind, const QueueSnapshot& snapshot) override {
    return WriteAtomically(Path(FileOf(kind)), SnapshotToText(snapshot));
  }

  Status Locked(const std::function<Status()>& fn) override { return LockedFor(kRefreshWait, fn); }

  // Under the lock: a refresh reads touches while no submitter rewrites them.
  void Touch(const std::string& job, double at) override {
    // A submission never waits long on a reader (one stopped with ^Z holds the lock): its touch
    // is dropped instead, and a reader then finds the job by asking about it alone.
    (void)LockedFor(kTouchWait, [&]() -> Status {
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
    cached_.reset();
  }

  std::optional<double> TouchedAt(const std::string& job) override {
    LoadTouches();
    auto it = touched_.find(job);
    if (it == touched_.end()) return std::nullopt;
    return it->second;
  }

  std::optional<double> LastTouch() override {
    LoadTouches();
    return LatestOf(touched_);
  }

 private:
  fs::path Path(const char* suffix) const { return fs::path(base_.string() + suffix); }
  static const char* FileOf(SnapshotKind kind) {
    switch (kind) {
      case SnapshotKind::kQueue:
        return ".snapshot";
      case SnapshotKind::kAccounting:
        return ".accounting";
      case SnapshotKind::kClusterFacts:
        return ".facts";
    }
    return ".snapshot";
  }

  // flock with a deadline: kUnavailable when the holder keeps it longer (a refresh then asks
  // alone). The lock goes with the fd, so a holder that dies never leaves it held.
  Status LockedFor(std::chrono::milliseconds wait, const std::function<Status()>& fn) {
    Fd lock(::open(Path(".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (lock.fd < 0)
      return UnavailableError(fmt::format("slurm: {}: {}", Path(".lock").string(), std::strerror(errno)));
    auto deadline = std::chrono::steady_clock::now() + wait;
    while (::flock(lock.fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) {
        return UnavailableError(fmt::format("slurm: lock {}: {}", Path(".lock").string(), std::strerror(errno)));
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        return UnavailableError(
            fmt::format("slurm: {} is held longer than {} ms", Path(".lock").string(), wait.count()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return fn();
  }

  // Reads the touches again only when their file changed: readers ask once per job per turn.
  void LoadTouches() {
    struct stat st {};
    if (::stat(Path(".touched").c_str(), &st) != 0) {
      touched_.clear();
      cached_.reset();
      return;
    }
    // Each rewrite is a new file (rename): its inode tells it apart even within one mtime tick.
    auto seen = std::make_tuple(st.st_ino, st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_size);
    if (cached_ && *cached_ == seen) return;
    touched_.clear();
    if (auto text = ReadStoreFile(Path(".touched"))) {
      std::istringstream in(*text);
      std::string name;
      double when = 0;
      while (in >> name >> when) touched_[name] = when;
    }
    cached_ = seen;
  }

  // A temp file of its own (mkstemp: O_EXCL, never a link someone left), then rename.
  static Status WriteAtomically(const fs::path& path, const std::string& text) {
    std::string tmp = path.string() + ".XXXXXX";
    Fd fd(::mkstemp(tmp.data()));
    if (fd.fd < 0)
      return UnavailableError(fmt::format("slurm: cannot write {}: {}", path.string(), std::strerror(errno)));
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::write(fd.fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::unlink(tmp.c_str());
        return UnavailableError(fmt::format("slurm: cannot write {}: {}", tmp, std::strerror(errno)));
      }
      done += static_cast<size_t>(n);
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      int err = errno;
      ::unlink(tmp.c_str());
      return UnavailableError(fmt::format("slurm: cannot write {}: {}", path.string(), std::strerror(err)));
    }
    return OkStatus();
  }

  fs::path base_;
  std::optional<std::tuple<ino_t, time_t, long, off_t>> cached_;
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

// A directory of this user's alone: not a link, owned by the user, writable by nobody else. Paths
// under it are then safe to use by name (no one else can add, swap or remove an entry).
Status CheckPrivateDir(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 022) != 0) {
    return FailedPreconditionError(
        fmt::format("slurm: {} is not a directory of this user's alone: the queue snapshot is not shared", dir));
  }
  return OkStatus();
}

// Makes `dir` 0700 if it is missing (never through a link), then checks it.
Status MakePrivateDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return UnavailableError(fmt::format("slurm: cannot make {}: {}", dir, std::strerror(errno)));
  }
  return CheckPrivateDir(dir);
}

Result<std::shared_ptr<SnapshotStore>> MakeFileSnapshotStore(const std::string& dir, const std::string& cluster) {
  TORCHX_RETURN_IF_ERROR(MakePrivateDir(dir));
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
  // <runtime dir>/torchx or <tmp>/torchx-<uid> first: in a shared /tmp, someone else may have
  // made it (or a link in its place), which is refused.
  if (MakePrivateDir(fs::path(dir).parent_path().string()).ok()) {
    if (auto store = MakeFileSnapshotStore(dir, cluster); store.ok()) return *store;
  }
  static std::shared_ptr<SnapshotStore> process = MakeMemorySnapshotStore();
  return process;
}

}  // namespace torchx::schedulers::slurm
