#include "log_stream.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common.h"
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
  const char* data() const { return data_.data(); }
  size_t size() const { return used_; }
  bool empty() const { return used_ == 0; }
  void clear() { used_ = 0; }

 private:
  char* Grow(size_t n) {
    if (used_ + n > data_.size()) data_.resize(std::max(2 * data_.size(), used_ + n));
    char* out = data_.data() + used_;
    used_ += n;
    return out;
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
    runner::Runner runner(registry);  // one per thread: a Runner is not shared across threads
    schedulers::LogOptions opts = options;
    opts.role = ref.role;
    opts.replica = ref.replica;
    auto it = runner.LogLines(handle, opts);
    Status err = it.status();
    if (it) {
      std::string prefix = color ? fmt::format("\033[32m{}/{}\033[0m ", ref.role, ref.replica)
                                 : fmt::format("{}/{} ", ref.role, ref.replica);
      // Whole lines are buffered per replica and written under the lock in one call, so lines of
      // different replicas never mix; the buffer is flushed before a call that may block.
      LineBuffer buf;
      auto flush = [&] {
        if (buf.empty()) return;
        std::lock_guard<std::mutex> lock(mu);
        std::fwrite(buf.data(), 1, buf.size(), out);
        std::fflush(out);
        buf.clear();
      };
      auto append = [&](std::string_view text) {
        if (json) {
          if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
          nlohmann::json j = {{"role", ref.role}, {"replica", ref.replica}, {"line", std::string(text)}};
          buf.Append({}, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        } else {
          buf.Append(prefix, text);
        }
      };
      while (true) {
        if (!(*it)->Ready() || buf.size() >= (1u << 16)) flush();
        auto more = (*it)->NextBatch(append);
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
