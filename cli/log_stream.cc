#include "log_stream.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common.h"
#include "core/line_scan.h"
#include "torchx/runner/runner.h"

namespace torchx::cli {

Result<std::vector<ReplicaRef>> AllReplicas(runner::Runner& runner, const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(auto app, runner.Describe(handle));
  if (!app) return AppNotFound(handle);
  std::vector<ReplicaRef> out;
  for (const specs::Role& role : app->roles) {
    for (int i = 0; i < role.num_replicas; ++i) out.push_back({role.name, i});
  }
  return out;
}

namespace {

// One replica's pending output. Appending a line costs one capacity check and two copies: on a
// log of short lines, std::string::append per piece cost more than the copying itself.
class LineBuffer {
 public:
  /// `prefix`, then `text`, then a newline unless `text` ends with one.
  void Append(std::string_view prefix, std::string_view text) {
    bool newline = text.empty() || text.back() != '\n';
    char* out = Grow(prefix.size() + text.size() + (newline ? 1 : 0));
    // (memcpy's pointers must not be null, even for no bytes: an empty view's may be.)
    if (!prefix.empty()) std::memcpy(out, prefix.data(), prefix.size());
    if (!text.empty()) std::memcpy(out + prefix.size(), text.data(), text.size());
    if (newline) out[prefix.size() + text.size()] = '\n';
  }
  /// Every line of `block` (as LogIterator::NextBlock hands them) with `prefix` before it: the
  /// loop `torchx log` spends its time in on a large log. Lines are found 64 bytes at a time
  /// (internal::ForEachLine, not a memchr per line); the prefix is copied as a fixed 32 bytes and
  /// the line in whole 32-byte moves into the slack, fixed-size copies instead of calls.
  void AppendLines(std::string_view prefix, std::string_view block) {
    if (prefix.size() > kPrefixMax || block.empty()) {
      for (size_t at = 0; at < block.size();) {
        size_t nl = block.find('\n', at);
        size_t len = (nl == std::string_view::npos ? block.size() : nl + 1) - at;
        Append(prefix, block.substr(at, len));
        at += len;
      }
      if (block.empty()) Append(prefix, block);
      return;
    }
    char padded[kPrefixMax] = {};
    std::memcpy(padded, prefix.data(), prefix.size());
    // Room for the block and a prefix per 16 bytes of it; a block of shorter lines grows as it goes.
    Reserve(block.size() + block.size() / 16 * prefix.size() + 1 + kSlack);
    char* out = data_.data() + used_;
    const char* end = block.data() + block.size();
    const char* rest = internal::ForEachLine(block.data(), end, [&](const char* line, size_t len) {
      if (static_cast<size_t>(data_.data() + data_.size() - out) < len + 1 + kSlack) {
        used_ = static_cast<size_t>(out - data_.data());
        Reserve(static_cast<size_t>(end - line) + len + 1 + kSlack);
        out = data_.data() + used_;
      }
      std::memcpy(out, padded, kPrefixMax);  // the bytes past the prefix are overwritten next
      out += prefix.size();
      // Whole 32-byte moves where the block has the bytes (the slack takes the overshoot): a
      // fixed-size copy is a few vector moves, where memcpy of a varying length is a call.
      size_t whole = (len + 31) & ~size_t{31};
      if (whole <= 256 && whole <= static_cast<size_t>(end - line)) {
        for (size_t k = 0; k < whole; k += 32) std::memcpy(out + k, line + k, 32);
      } else {
        std::memcpy(out, line, len);
      }
      out += len;
    });
    if (rest < end) {  // the block's last line has no newline: it gets one
      used_ = static_cast<size_t>(out - data_.data());
      Append(prefix, std::string_view(rest, static_cast<size_t>(end - rest)));
      return;
    }
    used_ = static_cast<size_t>(out - data_.data());
  }
  const char* data() const { return data_.data(); }
  size_t size() const { return used_; }
  bool empty() const { return used_ == 0; }
  void clear() { used_ = 0; }

 private:
  static constexpr size_t kPrefixMax = 32;
  // Room past a line for the padded prefix and the 32-byte moves' overshoot.
  static constexpr size_t kSlack = 256;

  char* Grow(size_t n) {
    Reserve(n);
    char* out = data_.data() + used_;
    used_ += n;
    return out;
  }
  // Room for `n` more bytes past used_.
  void Reserve(size_t n) {
    if (used_ + n > data_.size()) data_.resize(std::max(2 * data_.size(), used_ + n));
  }

  std::vector<char> data_;
  size_t used_ = 0;
};

}  // namespace

Status StreamLogs(plugins::PluginRegistry& registry, const std::string& handle, const std::vector<ReplicaRef>& replicas,
                  const schedulers::LogOptions& options, bool json, std::FILE* out) {
  std::mutex mu;
  Status first_error;
  bool color = isatty(fileno(out)) != 0 && !json;
  auto worker = [&](const ReplicaRef& ref) {
    runner::Runner runner(registry, ReaderRunnerOptions());  // one per thread: a Runner is not shared across threads
    schedulers::LogOptions opts = options;
    opts.role = ref.role;
    opts.replica = ref.replica;
    auto it = runner.LogLines(handle, opts);
    Status err = it.status();
    if (it) {
      std::string label = options.driver ? "driver" : fmt::format("{}/{}", ref.role, ref.replica);
      std::string prefix = color ? fmt::format("\033[32m{}\033[0m ", label) : label + " ";
      // Whole lines are buffered per replica and written under the lock in one call, so lines of
      // different replicas never mix; the buffer is flushed before a call that may block.
      LineBuffer buf;
      // Straight to the descriptor: stdio would copy the buffer again and cut it into its own writes.
      auto flush = [&] {
        if (buf.empty()) return;
        std::lock_guard<std::mutex> lock(mu);
        std::fflush(out);
        const char* at = buf.data();
        size_t left = buf.size();
        while (left > 0) {
          ssize_t n = ::write(fileno(out), at, left);
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) break;  // a closed pipe (`| head`): nothing more can be said there
          at += n;
          left -= static_cast<size_t>(n);
        }
        buf.clear();
      };
      auto append_line = [&](std::string_view text) {
        if (json) {
          if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
          nlohmann::json j =
              options.driver
                  ? nlohmann::json{{"driver", true}, {"line", std::string(text)}}
                  : nlohmann::json{{"role", ref.role}, {"replica", ref.replica}, {"line", std::string(text)}};
          buf.Append({}, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        } else {
          buf.Append(prefix, text);
        }
      };
      // A block of whole lines at a time (LogIterator::NextBlock): one call per block, a tight
      // loop per line, which is most of `torchx log`'s time on a large log.
      auto append = [&](std::string_view block) {
        if (!json) return buf.AppendLines(prefix, block);
        const char* p = block.data();
        const char* end = p + block.size();
        while (p < end) {
          const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
          size_t len = nl ? static_cast<size_t>(nl - p) + 1 : static_cast<size_t>(end - p);
          append_line(std::string_view(p, len));
          p += len;
        }
        if (block.empty()) append_line(block);  // an empty last line is still a line
      };
      while (true) {
        if (!(*it)->Ready() || buf.size() >= (1u << 18)) flush();
        auto more = (*it)->NextBlock(append);
        if (!more) {
          err = more.error();
          break;
        }
        if (!*more) break;
      }
      flush();
    }
    if (!err.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      if (first_error.ok()) first_error = err;
    }
  };
  std::vector<std::thread> threads;
  for (const ReplicaRef& ref : replicas) threads.emplace_back(worker, ref);
  for (std::thread& t : threads) t.join();
  return first_error;
}

}  // namespace torchx::cli
