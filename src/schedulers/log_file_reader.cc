#include "schedulers/log_file_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace torchx::schedulers {
namespace {

namespace fs = std::filesystem;

// Reads of 128 KiB: `torchx log` of a large file is bound by copying; a read this size stays in
// the cache while it is prefixed (1 MiB ones measured no faster).
constexpr size_t kChunk = 1 << 17;
// Refills per batch: bounds one batch (and the caller's output buffer) to about 1 MiB.
constexpr int kRefillsPerBatch = 8;
// A line longer than this (progress bars redrawn with \r, binary output) is handed out in pieces
// of this size, so that memory stays bounded and a follower sees output without a newline.
constexpr size_t kMaxLineBytes = 1 << 20;
// A file at least this large, read once (not followed), is read ahead on a thread (ReadAhead).
constexpr off_t kReadAheadBytes = 8 << 20;

// Bytes read from the file: a buffer that grows without zero-filling (a std::string's resize writes
// every byte it adds, a tenth of the time of reading a large log).
class Buffer {
 public:
  const char* data() const { return data_ ? data_.get() : ""; }  // never null, for memchr
  size_t size() const { return size_; }
  char back() const { return data_[size_ - 1]; }
  size_t capacity() const { return capacity_; }
  // Room for `n` more bytes past size(); Commit says how many were written.
  char* Grow(size_t n) {
    if (size_ + n > capacity_) {
      size_t capacity = std::max(size_ + n, 2 * capacity_);
      std::unique_ptr<char[]> bigger(new char[capacity]);
      if (size_) std::memcpy(bigger.get(), data_.get(), size_);
      data_ = std::move(bigger);
      capacity_ = capacity;
    }
    return data_.get() + size_;
  }
  void Commit(size_t n) { size_ += n; }
  void Append(char c) {
    *Grow(1) = c;
    Commit(1);
  }
  void Erase(size_t prefix) {
    if (prefix && size_ > prefix) std::memmove(data_.get(), data_.get() + prefix, size_ - prefix);
    size_ -= std::min(prefix, size_);
  }
  void Clear() { size_ = 0; }
  char* mutable_data() { return data_.get(); }
  // Shifts the bytes so that they end on a 64-byte boundary: the next read lands aligned, which
  // the kernel copies at about twice the speed of an unaligned one. Returns the shift.
  size_t AlignEnd() {
    size_t pad = (64 - size_ % 64) % 64;
    if (pad == 0) return 0;
    Grow(pad);
    if (size_) std::memmove(data_.get() + pad, data_.get(), size_);
    size_ += pad;
    return pad;
  }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// A file read ahead on a thread of its own, so that the kernel's copy of the next chunk overlaps
// the caller's work on this one: `torchx log` of a large finished log spends about as long
// reading as it does prefixing, and the two take one core each. Each chunk leaves kHeadroom
// bytes free before its data, where the caller puts the previous chunk's unfinished last line.
class ReadAhead {
 public:
  static constexpr size_t kHeadroom = 64 << 10;
  static constexpr size_t kChunkBytes = 1 << 20;

  explicit ReadAhead(int fd) : fd_(fd) {
    for (int i = 0; i < kBuffers; ++i) free_.emplace_back();
    thread_ = std::thread([this] { Run(); });
  }
  ~ReadAhead() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  /// The next chunk (its data from kHeadroom to size()), or nullopt at the end of the file as it
  /// was when the thread reached it (or on a read error, which ends it the same way).
  std::optional<Buffer> Take() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !ready_.empty() || done_; });
    if (ready_.empty()) return std::nullopt;
    Buffer out = std::move(ready_.front());
    ready_.pop_front();
    cv_.notify_all();
    return out;
  }
  /// Gives a chunk back for reuse once nothing points into it.
  void Recycle(Buffer buffer) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      free_.push_back(std::move(buffer));
    }
    cv_.notify_all();
  }

 private:
  // Three chunks: one being read, one ready, one the caller holds.
  static constexpr int kBuffers = 3;

  void Run() {
    while (true) {
      Buffer buffer;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !free_.empty(); });
        if (stop_) break;
        buffer = std::move(free_.front());
        free_.pop_front();
      }
      buffer.Clear();
      buffer.Grow(kHeadroom + kChunkBytes);
      buffer.Commit(kHeadroom);
      while (buffer.size() < kHeadroom + kChunkBytes) {
        ssize_t n = ::read(fd_, buffer.mutable_data() + buffer.size(), kHeadroom + kChunkBytes - buffer.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        buffer.Commit(static_cast<size_t>(n));
      }
      bool end = buffer.size() < kHeadroom + kChunkBytes;
      std::lock_guard<std::mutex> lock(mu_);
      if (buffer.size() > kHeadroom) ready_.push_back(std::move(buffer));
      if (end) break;
      cv_.notify_all();
    }
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    cv_.notify_all();
  }

  int fd_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Buffer> free_, ready_;
  bool stop_ = false, done_ = false;
  std::thread thread_;  // last: it starts once the members it uses exist
};

class LogFileReader : public LogIterator {
 public:
  LogFileReader(std::string path, bool follow, std::function<bool()> app_terminal)
      : path_(std::move(path)), follow_(follow), app_terminal_(std::move(app_terminal)) {}
  ~LogFileReader() override {
    ahead_.reset();  // its thread reads fd_
    if (fd_ >= 0) ::close(fd_);
    if (inotify_fd_ >= 0) ::close(inotify_fd_);
  }

  bool Ready() override {
    if (HasLine() || !follow_ || finished_) return true;
    ReadMore();
    return HasLine();
  }

  Result<std::optional<std::string>> Next() override {
    while (true) {
      if (std::optional<std::string_view> line = TakeLine()) return std::optional<std::string>(std::string(*line));
      Compact();
      if (ReadMore()) continue;
      if (!follow_ || finished_) {
        // The last line, without its newline.
        if (pending_.size() == head_) return std::optional<std::string>();
        std::string rest(pending_.data() + head_, pending_.size() - head_);
        pending_.Clear();
        head_ = 0;
        return std::optional<std::string>(std::move(rest));
      }
      // At the end of what is written so far: once the app is terminal, one last read drains it.
      if (app_terminal_()) {
        finished_ = true;
        continue;
      }
      WaitForChange();
    }
  }

  // Every whole line read so far as one view (refilled once if there was none); an over-long
  // line without its newline yet goes by NextBatch, which hands it out in pieces.
  Result<bool> NextBlock(const std::function<void(std::string_view)>& sink) override {
    for (int refill = 0; refill < 2; ++refill) {
      size_t avail = pending_.size() - head_;
      const char* start = pending_.data() + head_;
      if (const void* last = memrchr(start, '\n', avail)) {
        size_t len = static_cast<size_t>(static_cast<const char*>(last) - start) + 1;
        head_ += len;
        sink(std::string_view(start, len));
        return true;
      }
      if (avail >= kMaxLineBytes) break;
      Compact();
      if (!ReadMore()) break;
    }
    return NextBatch(sink);
  }

  Result<bool> NextBatch(const std::function<void(std::string_view)>& sink) override {
    bool any = false;
    for (int refill = 0; refill < kRefillsPerBatch; ++refill) {
      while (std::optional<std::string_view> line = TakeLine()) {
        sink(*line);
        any = true;
      }
      Compact();
      if (!ReadMore()) break;
    }
    if (any) return true;
    // Nothing whole on disk now: the end, the last unterminated line, or (following) a wait.
    TORCHX_ASSIGN_OR_RETURN(std::optional<std::string> line, Next());
    if (!line) return false;
    sink(*line);
    return true;
  }

 private:
  bool HasLine() const {
    return pending_.size() - head_ >= kMaxLineBytes ||
           std::memchr(pending_.data() + head_, '\n', pending_.size() - head_) != nullptr;
  }

  // The next whole line (with its newline) in the buffer; valid until the buffer changes.
  std::optional<std::string_view> TakeLine() {
    const char* start = pending_.data() + head_;
    size_t avail = pending_.size() - head_;
    const void* nl = std::memchr(start, '\n', std::min(avail, kMaxLineBytes));
    if (!nl && avail < kMaxLineBytes) return std::nullopt;
    size_t len = nl ? static_cast<size_t>(static_cast<const char*>(nl) - start) + 1 : kMaxLineBytes;
    head_ += len;
    return std::string_view(start, len);
  }

  // Drops consumed lines once per refill, not once per line (read ahead, the next chunk takes them).
  void Compact() {
    if (ahead_) return;
    pending_.Erase(head_);
    head_ = pending_.AlignEnd();
  }

  // Appends what the file has beyond what was read; false at its current end (or while it does
  // not exist). A later call sees what was appended since.
  bool ReadMore() {
    if (fd_ < 0) {
      fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd_ < 0) return false;
      struct stat st {};
      if (!follow_ && ::fstat(fd_, &st) == 0 && st.st_size >= kReadAheadBytes)
        ahead_ = std::make_unique<ReadAhead>(fd_);
    }
    if (ahead_) return TakeAhead();
    ssize_t n;
    do {
      n = ::read(fd_, pending_.Grow(kChunk), kChunk);
    } while (n < 0 && errno == EINTR);
    pending_.Commit(static_cast<size_t>(n > 0 ? n : 0));
    if (n > 0) return true;
    // At the end of this file. A retried replica's logs move to attempt_<n>/ and a new file takes
    // the path (ReplicaLogs::StartAttempt): a follower goes on with the new attempt, as `tail -F`.
    if (follow_ && Replaced()) {
      if (pending_.size() > head_ && pending_.back() != '\n') pending_.Append('\n');  // the old file's last line
      ::close(fd_);
      fd_ = -1;
      if (watch_ >= 0) {
        inotify_rm_watch(inotify_fd_, watch_);
        watch_ = -1;
      }
      return ReadMore();
    }
    return false;
  }

  // The read-ahead's next chunk becomes the buffer, with the unfinished last line of the one before
  // put in its headroom; the one before goes back to be read into again.
  bool TakeAhead() {
    std::optional<Buffer> next = ahead_->Take();
    if (!next) return false;
    size_t rest = pending_.size() - head_;
    if (rest <= ReadAhead::kHeadroom) {
      if (rest > 0) std::memcpy(next->mutable_data() + ReadAhead::kHeadroom - rest, pending_.data() + head_, rest);
      head_ = ReadAhead::kHeadroom - rest;
    } else {  // a line longer than the headroom so far: joined by copying
      Buffer joined;
      size_t data = next->size() - ReadAhead::kHeadroom;
      std::memcpy(joined.Grow(rest + data), pending_.data() + head_, rest);
      std::memcpy(joined.mutable_data() + rest, next->data() + ReadAhead::kHeadroom, data);
      joined.Commit(rest + data);
      ahead_->Recycle(std::move(*next));
      next = std::move(joined);
      head_ = 0;
    }
    Buffer done = std::exchange(pending_, std::move(*next));
    if (done.capacity() >= ReadAhead::kHeadroom + ReadAhead::kChunkBytes) ahead_->Recycle(std::move(done));
    return true;
  }

  // Whether the path now names another file than the one open.
  bool Replaced() const {
    struct stat open_file {
    }, at_path{};
    if (::fstat(fd_, &open_file) != 0 || ::stat(path_.c_str(), &at_path) != 0) return false;
    return open_file.st_ino != at_path.st_ino || open_file.st_dev != at_path.st_dev;
  }

  void WaitForChange() {
    if (inotify_fd_ < 0) inotify_fd_ = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (inotify_fd_ >= 0 && watch_ < 0) {
      // IN_MOVE_SELF: a retry moves this attempt's file away (see ReadMore).
      watch_ = inotify_add_watch(inotify_fd_, path_.c_str(), IN_MODIFY | IN_CLOSE_WRITE | IN_MOVE_SELF);
      bool new_watch = watch_ >= 0 || !watching_dir_;
      if (watch_ < 0 && !watching_dir_) {  // the file does not exist yet: watch its directory
        watching_dir_ = inotify_add_watch(inotify_fd_, fs::path(path_).parent_path().c_str(), IN_CREATE) >= 0;
      }
      // What was written between the last read and this watch sent no event: read again first
      // instead of waiting out the timeout.
      if (new_watch) return;
    }
    // Woken by a write; the timeout only bounds how late we notice the app ending quietly.
    pollfd pfd{inotify_fd_, POLLIN, 0};
    ::poll(&pfd, inotify_fd_ >= 0 ? 1 : 0, 500);
    char drain[4096];
    while (inotify_fd_ >= 0 && ::read(inotify_fd_, drain, sizeof(drain)) > 0) {
    }
  }

  std::string path_;
  bool follow_;
  std::function<bool()> app_terminal_;
  int fd_ = -1;
  std::unique_ptr<ReadAhead> ahead_;  // a large file read once (not following)
  Buffer pending_;
  size_t head_ = 0;  // start of the unconsumed part of pending_
  bool finished_ = false;
  int inotify_fd_ = -1;
  int watch_ = -1;
  bool watching_dir_ = false;
};

}  // namespace

std::unique_ptr<LogIterator> MakeLogFileReader(std::string path, bool follow, std::function<bool()> app_terminal) {
  return std::make_unique<LogFileReader>(std::move(path), follow, std::move(app_terminal));
}

}  // namespace torchx::schedulers
