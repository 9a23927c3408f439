// A replica's stdout.log / stderr.log / combined.log and its archived attempts (see
// replica_logs.h).
#include "schedulers/local/replica_logs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "core/state_dir.h"
#include "schedulers/local/process_launcher.h"

namespace torchx::schedulers::local {
namespace {

namespace fs = std::filesystem;

void WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // a full disk loses log output, never the app
    data += w;
    n -= static_cast<size_t>(w);
  }
}

constexpr size_t kMaxPartialLine = 1 << 20;  // a megabyte with no newline is written anyway

}  // namespace

void MakeReplicaDir(const std::string& dir) {
  // One mkdir in the common case (the role's directory exists); the full walk only when a parent is missing.
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) (void)internal::CreatePrivateDirs(dir);
}

ReplicaLogs::ReplicaLogs(std::string log_dir, std::string error_file)
    : dir_(std::move(log_dir)), error_file_(std::move(error_file)) {}

ReplicaLogs::~ReplicaLogs() { CloseFiles(); }

ReplicaLogs::ReplicaLogs(ReplicaLogs&& o) noexcept
    : dir_(std::move(o.dir_)),
      error_file_(std::move(o.error_file_)),
      out_file_(std::exchange(o.out_file_, -1)),
      err_file_(std::exchange(o.err_file_, -1)),
      combined_file_(std::exchange(o.combined_file_, -1)),
      out_partial_(std::move(o.out_partial_)),
      err_partial_(std::move(o.err_partial_)),
      created_(o.created_) {}

void ReplicaLogs::StartAttempt(int attempt, bool dir_made) {
  fs::path dir(dir_);
  std::error_code ec;
  if (!dir_made) MakeReplicaDir(dir_);
  if (attempt > 0) {
    fs::path dst = dir / fmt::format("attempt_{}", attempt - 1);
    (void)internal::CreatePrivateDirs(dst.string());
    for (const char* name : {"stdout.log", "stderr.log", "combined.log", "error.json"}) {
      if (fs::exists(dir / name, ec)) fs::rename(dir / name, dst / name, ec);
    }
    fs::remove(error_file_, ec);
  }
  out_partial_.clear();
  err_partial_.clear();
  created_ = false;
}

void ReplicaLogs::Create() {
  if (created_) return;
  created_ = true;
  fs::path dir(dir_);
  for (auto [fd, name] : {std::pair{&out_file_, "stdout.log"}, std::pair{&err_file_, "stderr.log"},
                          std::pair{&combined_file_, "combined.log"}}) {
    if (*fd < 0)
      *fd = MoveFdHigh(::open((dir / name).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_APPEND, 0600));
  }
}

int ReplicaLogs::Fd(int& fd, const char* name) {
  // Up among the high descriptors, out of what a replica's child copies (process_launcher.h).
  if (fd < 0) fd = MoveFdHigh(::open((fs::path(dir_) / name).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  return fd;
}

void ReplicaLogs::Append(Stream stream, std::string_view data) {
  Create();
  bool is_err = stream == Stream::kStderr;
  WriteAll(is_err ? Fd(err_file_, "stderr.log") : Fd(out_file_, "stdout.log"), data.data(), data.size());
  AppendCombined(is_err ? err_partial_ : out_partial_, data);
}

void ReplicaLogs::AppendCombined(std::string& partial, std::string_view data) {
  size_t last_nl = data.rfind('\n');
  int combined = Fd(combined_file_, "combined.log");
  if (last_nl == std::string_view::npos) {
    partial.append(data);
    if (partial.size() > kMaxPartialLine) {
      WriteAll(combined, partial.data(), partial.size());
      partial.clear();
    }
    return;
  }
  partial.append(data.substr(0, last_nl + 1));
  WriteAll(combined, partial.data(), partial.size());
  partial.assign(data.substr(last_nl + 1));
}

void ReplicaLogs::EndStream(Stream stream) {
  std::string& partial = stream == Stream::kStderr ? err_partial_ : out_partial_;
  if (partial.empty()) return;
  WriteAll(Fd(combined_file_, "combined.log"), partial.data(), partial.size());
  partial.clear();
}

void ReplicaLogs::WriteStderrLine(const std::string& line) {
  Create();
  std::string text = line + "\n";
  WriteAll(Fd(err_file_, "stderr.log"), text.data(), text.size());
  WriteAll(Fd(combined_file_, "combined.log"), text.data(), text.size());
}

void ReplicaLogs::CloseFiles() {
  for (int* fd : {&out_file_, &err_file_, &combined_file_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

}  // namespace torchx::schedulers::local
