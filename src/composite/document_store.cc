#include "composite/document_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>

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

namespace {

constexpr std::string_view kBaseFrame = "torchx-record 2 ";
constexpr std::string_view kJournalFrame = "torchx-journal 2 ";
// A journal may grow to the base's size (and at least this) before the record is rewritten.
constexpr std::int64_t kMinJournalBytes = 64 * 1024;

// The whole of an open file, and its stat.
Status ReadFd(int fd, std::string& out, struct stat& st) {
  if (::fstat(fd, &st) != 0) return UnavailableError(std::strerror(errno));
  out.clear();
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return UnavailableError(std::strerror(errno));
    if (n == 0) return OkStatus();
    out.append(buf, static_cast<size_t>(n));
  }
}

// The complete lines of `text` (a last line without its newline was cut short: not one).
std::vector<std::string_view> CompleteLines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (true) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) return out;
    out.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
}

std::optional<std::uint64_t> Number(std::string_view s) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  return v;
}

std::int64_t MtimeNs(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

Status WriteAll(int fd, std::string_view text) {
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return UnavailableError(std::strerror(errno ? errno : EIO));
    off += static_cast<size_t>(n);
  }
  return OkStatus();
}

}  // namespace

// What a read found: the record, its generation, whether it is in the form before this one, and
// the journal's state (its generation is the base's, else it is not part of the record).
struct DocumentStore::Loaded {
  RecordLines lines;
  std::uint64_t generation = 0;
  bool legacy = false;
  bool journal_current = false;
  /// Where the journal's last closed group ends: what a writer appends after.
  std::int64_t journal_committed = 0;
  Version version;
};

std::string DocumentStore::JournalOf(const std::string& id) const {
  return (fs::path(dir_) / (id + ".journal")).string();
}

// Writes what `produce` hands its writer to `path` through a temporary file, fsync'd and renamed,
// then fsyncs the directory (else a power loss could bring back an older record: a child
// "waiting" that was submitted). Written through a 64 KiB buffer: a record is never whole in
// memory as text.
using Producer = std::function<Status(const std::function<Status(std::string_view)>& write)>;
static Status ReplaceFile(const std::string& kind, const std::string& dir, const std::string& path,
                          const Producer& produce) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return StoreError(kind, "write " + tmp, errno);
  std::string buffer;
  buffer.reserve(1 << 16);
  auto write = [&](std::string_view text) -> Status {
    if (buffer.size() + text.size() > (1 << 16)) {
      TORCHX_RETURN_IF_ERROR(WriteAll(fd, buffer));
      buffer.clear();
    }
    if (text.size() > (1 << 16)) return WriteAll(fd, text);
    buffer.append(text);
    return OkStatus();
  };
  Status written = produce(write);
  if (written.ok()) written = WriteAll(fd, buffer);
  if (written.ok() && ::fsync(fd) != 0) written = UnavailableError(std::strerror(errno));
  ::close(fd);
  if (!written.ok()) {
    ::unlink(tmp.c_str());
    return UnavailableError(fmt::format("{} store: write {}: {}", kind, tmp, written.message()));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return StoreError(kind, "rename " + tmp, err);
  }
  if (int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); d >= 0) {
    (void)::fsync(d);
    ::close(d);
  }
  return OkStatus();
}

// A record line, which must be one line.
static Status LineTo(const std::function<Status(std::string_view)>& write, std::string_view line) {
  if (line.find('\n') != std::string_view::npos) return InternalError("a record line holds a newline");
  TORCHX_RETURN_IF_ERROR(write(line));
  return write("\n");
}

Status DocumentStore::WriteBase(const std::string& id, const RecordLines& record, std::uint64_t generation) const {
  return ReplaceFile(kind_, dir_, PathOf(id), [&](const auto& write) -> Status {
    TORCHX_RETURN_IF_ERROR(write(fmt::format("{}{} {}\n", kBaseFrame, generation, record.children.size())));
    TORCHX_RETURN_IF_ERROR(LineTo(write, record.header));
    for (const std::string& c : record.children) TORCHX_RETURN_IF_ERROR(LineTo(write, c));
    return OkStatus();
  });
}

Status DocumentStore::ResetJournal(const std::string& id, std::uint64_t generation) const {
  std::string frame = fmt::format("{}{}\n", kJournalFrame, generation);
  return ReplaceFile(kind_, dir_, JournalOf(id), [&frame](const auto& write) { return write(frame); });
}

Result<std::optional<DocumentStore::Loaded>> DocumentStore::Load(const std::string& id) const {
  std::string path = PathOf(id);
  for (int attempt = 0; attempt < 20; ++attempt) {
    Loaded out;
    std::string text;
    struct stat st {};
    {
      int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT) return std::optional<Loaded>();
      if (fd < 0) return StoreError(kind_, "read " + path, errno);
      Status read = ReadFd(fd, text, st);
      ::close(fd);
      if (!read.ok()) return UnavailableError(fmt::format("{} store: read {}: {}", kind_, path, read.message()));
    }
    out.version.base_inode = st.st_ino;
    out.version.base_mtime_ns = MtimeNs(st);
    out.version.base_size = st.st_size;
    if (!std::string_view(text).starts_with(kBaseFrame)) {
      out.legacy = true;  // one JSON document: the form before this one
      auto split = legacy_(text);
      if (!split) return split.error().WithContext(path);
      out.lines = std::move(*split);
    } else {
      std::vector<std::string_view> lines = CompleteLines(text);
      if (lines.empty()) {
        return InternalError(fmt::format("{} store: {}: not a whole record (no frame line)", kind_, path));
      }
      std::string_view frame = lines.front().substr(kBaseFrame.size());
      size_t space = frame.find(' ');
      auto generation = Number(frame.substr(0, space));
      auto count = space == std::string_view::npos ? std::nullopt : Number(frame.substr(space + 1));
      if (!generation || !count || lines.size() != *count + 2) {
        return InternalError(fmt::format("{} store: {}: not a whole record (frame `{}`, {} lines)", kind_, path,
                                         lines.front(), lines.size()));
      }
      out.generation = *generation;
      out.lines.header = std::string(lines[1]);
      out.lines.children.reserve(*count);
      for (size_t i = 2; i < lines.size(); ++i) out.lines.children.emplace_back(lines[i]);
    }
    std::string journal;
    struct stat jst {};
    int fd = ::open(JournalOf(id).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno != ENOENT) return StoreError(kind_, "read " + JournalOf(id), errno);
    if (fd >= 0) {
      Status read = ReadFd(fd, journal, jst);
      ::close(fd);
      if (!read.ok())
        return UnavailableError(fmt::format("{} store: read {}: {}", kind_, JournalOf(id), read.message()));
      out.version.journal_inode = jst.st_ino;
      out.version.journal_mtime_ns = MtimeNs(jst);
      out.version.journal_size = jst.st_size;
    }
    std::vector<std::string_view> lines = CompleteLines(journal);
    std::optional<std::uint64_t> journal_generation;
    if (!lines.empty() && lines.front().starts_with(kJournalFrame)) {
      journal_generation = Number(lines.front().substr(kJournalFrame.size()));
    }
    if (journal_generation && !out.legacy && *journal_generation > out.generation) continue;  // rewritten meanwhile
    out.journal_current = journal_generation && !out.legacy && *journal_generation == out.generation;
    if (!out.journal_current) return std::optional(std::move(out));
    auto end_of = [&journal](std::string_view line) {
      return static_cast<std::int64_t>(line.data() - journal.data() + line.size() + 1);
    };
    out.journal_committed = end_of(lines.front());
    // The closed groups, in order; a group a writer did not finish is not part of the record, nor
    // anything after it (what a power loss left of unsynced appends: a writer rewrites the record
    // rather than append after it).
    std::optional<std::string> header;
    std::optional<size_t> keep;
    std::vector<std::pair<size_t, std::string_view>> children;
    for (size_t i = 1; i < lines.size(); ++i) {
      std::string_view line = lines[i];
      if (line == ".") {
        if (header) out.lines.header = std::move(*header);
        if (keep && *keep < out.lines.children.size()) out.lines.children.resize(*keep);
        for (auto& [index, child] : children) {
          if (index < out.lines.children.size()) {
            out.lines.children[index] = std::string(child);
          } else if (index == out.lines.children.size()) {
            out.lines.children.emplace_back(child);
          } else {
            return InternalError(fmt::format("{} store: {}: child {} set before child {} exists", kind_, JournalOf(id),
                                             index, out.lines.children.size()));
          }
        }
        header.reset();
        keep.reset();
        children.clear();
        out.journal_committed = end_of(line);
      } else if (line.starts_with("h ")) {
        header = std::string(line.substr(2));
      } else if (line.starts_with("k ")) {
        auto n = Number(line.substr(2));
        if (!n) break;
        keep = static_cast<size_t>(*n);
      } else if (line.starts_with("c ")) {
        size_t space = line.find(' ', 2);
        auto index = space == std::string_view::npos ? std::nullopt : Number(line.substr(2, space - 2));
        if (!index) break;
        children.emplace_back(static_cast<size_t>(*index), line.substr(space + 1));
      } else {
        break;
      }
    }
    return std::optional(std::move(out));
  }
  return UnavailableError(fmt::format("{} store: {} kept being rewritten while read; try again", kind_, path));
}

Status DocumentStore::Create(const std::string& id, const RecordLines& record) {
  TORCHX_RETURN_IF_ERROR(EnsureDir());
  std::string lock_path = (fs::path(dir_) / ".lock").string();
  StoreLock lock(lock_path);
  TORCHX_RETURN_IF_ERROR(lock.status(kind_, lock_path));
  std::error_code ec;
  if (fs::exists(PathOf(id), ec))
    return AlreadyExistsError(fmt::format("{} store: {} {} already exists", kind_, kind_, id));
  fs::remove(JournalOf(id), ec);  // a journal of an earlier record of this id is not this one's
  return WriteBase(id, record, 0);
}

Result<std::optional<RecordLines>> DocumentStore::Read(const std::string& id) const {
  TORCHX_ASSIGN_OR_RETURN(auto loaded, Load(id));
  if (!loaded) return std::optional<RecordLines>();
  return std::optional(std::move(loaded->lines));
}

std::optional<DocumentStore::Version> DocumentStore::VersionOf(const std::string& id) const {
  struct stat st {};
  if (::stat(PathOf(id).c_str(), &st) != 0) return std::nullopt;
  Version v;
  v.base_inode = st.st_ino;
  v.base_mtime_ns = MtimeNs(st);
  v.base_size = st.st_size;
  if (::stat(JournalOf(id).c_str(), &st) == 0) {
    v.journal_inode = st.st_ino;
    v.journal_mtime_ns = MtimeNs(st);
    v.journal_size = st.st_size;
  }
  return v;
}

Result<DocumentStore::Version> DocumentStore::Update(const std::string& id, const Editor& edit) {
  TORCHX_RETURN_IF_ERROR(EnsureDir());
  std::string lock_path = (fs::path(dir_) / ".lock").string();
  StoreLock lock(lock_path);
  TORCHX_RETURN_IF_ERROR(lock.status(kind_, lock_path));
  // Under the lock nobody else writes. Where the files are as this store last left them, the
  // record is not read again (the editor keeps its own copy of that version).
  std::optional<Loaded> full;
  Meta meta;
  auto now = VersionOf(id);
  if (!now) return NotFoundError(fmt::format("{} {} does not exist", kind_, id));
  if (meta_ && meta_->id == id && meta_->version == *now) {
    meta = *meta_;
  } else {
    TORCHX_ASSIGN_OR_RETURN(full, Load(id));
    if (!full) return NotFoundError(fmt::format("{} {} does not exist", kind_, id));
    meta = {id, full->version, full->generation, full->legacy, full->journal_current, full->journal_committed};
  }
  meta_.reset();  // until this write is done
  auto load = [&]() -> Result<RecordLines> {
    if (!full) {
      TORCHX_ASSIGN_OR_RETURN(full, Load(id));
      if (!full) return NotFoundError(fmt::format("{} {} does not exist", kind_, id));
    }
    return full->lines;
  };
  TORCHX_ASSIGN_OR_RETURN(RecordPatch patch, edit(meta.version, load));
  if (patch.empty()) {
    meta_ = meta;
    return meta.version;
  }
  std::string group;
  if (patch.header) group += fmt::format("h {}\n", *patch.header);
  if (patch.keep) group += fmt::format("k {}\n", *patch.keep);
  for (const auto& [index, child] : patch.children) group += fmt::format("c {} {}\n", index, child);
  group += ".\n";
  if (std::count(group.begin(), group.end(), '\n') !=
      static_cast<std::ptrdiff_t>(patch.children.size() + (patch.header ? 1 : 0) + (patch.keep ? 1 : 0) + 1)) {
    return InternalError("a record line holds a newline");
  }
  std::int64_t journal = meta.journal_current ? meta.journal_committed : 0;
  // Bytes after the last closed group (a writer died mid-append, or a power loss left junk) are
  // never cut off in place, where a reader may be reading them: the record is rewritten instead.
  bool torn = meta.journal_current && meta.version.journal_size > meta.journal_committed;
  if (meta.legacy || torn ||
      journal + static_cast<std::int64_t>(group.size()) > std::max(meta.version.base_size, kMinJournalBytes)) {
    // Rewritten whole: the base of the next generation, then its empty journal (a crash between
    // the two leaves a journal of the older generation, which readers skip and the next update
    // replaces). From the editor's record where it has it, else from the files.
    meta.generation += 1;
    if (patch.whole) {
      TORCHX_RETURN_IF_ERROR(ReplaceFile(kind_, dir_, PathOf(id), [&](const auto& write) -> Status {
        TORCHX_RETURN_IF_ERROR(write(fmt::format("{}{} {}\n", kBaseFrame, meta.generation, patch.whole_children)));
        return patch.whole([&write](std::string_view line) { return LineTo(write, line); });
      }));
    } else {
      TORCHX_ASSIGN_OR_RETURN(RecordLines lines, load());
      if (patch.header) lines.header = std::move(*patch.header);
      if (patch.keep && *patch.keep < lines.children.size()) lines.children.resize(*patch.keep);
      for (auto& [index, child] : patch.children) {
        if (index < lines.children.size()) {
          lines.children[index] = std::move(child);
        } else if (index == lines.children.size()) {
          lines.children.push_back(std::move(child));
        } else {
          return InternalError(
              fmt::format("{} store: child {} set before child {} exists", kind_, index, lines.children.size()));
        }
      }
      TORCHX_RETURN_IF_ERROR(WriteBase(id, lines, meta.generation));
    }
    meta.legacy = false;
    // The record is the new base now: a journal that cannot be reset is of the older generation,
    // which readers skip and the next update resets.
    meta.journal_current = ResetJournal(id, meta.generation).ok();
    meta.journal_committed = static_cast<std::int64_t>(fmt::format("{}{}\n", kJournalFrame, meta.generation).size());
  } else {
    if (!meta.journal_current) {
      TORCHX_RETURN_IF_ERROR(ResetJournal(id, meta.generation));
      meta.journal_current = true;
      meta.journal_committed = static_cast<std::int64_t>(fmt::format("{}{}\n", kJournalFrame, meta.generation).size());
      meta.version.journal_size = meta.journal_committed;
    }
    std::string path = JournalOf(id);
    int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return StoreError(kind_, "append " + path, errno);
    // A group cut short here (a full disk) is no part of the record, and the next update
    // rewrites the record rather than append after it.
    Status written = WriteAll(fd, group);
    if (!written.ok()) {
      ::close(fd);
      return UnavailableError(fmt::format("{} store: append {}: {}", kind_, path, written.message()));
    }
    // Written whole, the group is the record for every reader now: a sync that fails does not
    // undo it, so it is said, not returned as a write that did not happen.
    if (::fdatasync(fd) != 0) {
      std::fprintf(stderr, "torchx: %s store: %s written but not synced to disk: %s\n", kind_.c_str(), path.c_str(),
                   std::strerror(errno));
    }
    ::close(fd);
    meta.journal_committed += static_cast<std::int64_t>(group.size());
  }
  now = VersionOf(id);
  if (!now) return UnavailableError(fmt::format("{} store: {} vanished while written", kind_, PathOf(id)));
  meta.version = *now;
  meta_ = meta;
  return *now;
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
  for (const char* suffix : {".journal", ".driver.log", ".driver.lock"}) {
    std::error_code ec;
    fs::remove(fs::path(dir_) / (id + suffix), ec);
  }
  return OkStatus();
}

}  // namespace torchx::composite
