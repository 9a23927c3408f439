#include "log_stream.h"

#include <unistd.h>

#include <cstdio>
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

Status StreamLogs(plugins::PluginRegistry& registry, const std::string& handle, const std::vector<ReplicaRef>& replicas,
                  const schedulers::LogOptions& options, bool json) {
  std::mutex mu;
  Status first_error;
  bool color = StdoutIsTerminal() && !json;
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
      std::string buf;
      auto flush = [&] {
        if (buf.empty()) return;
        std::lock_guard<std::mutex> lock(mu);
        std::fwrite(buf.data(), 1, buf.size(), stdout);
        std::fflush(stdout);
        buf.clear();
      };
      while (true) {
        if (!(*it)->Ready() || buf.size() >= (1u << 16)) flush();
        auto line = (*it)->Next();
        if (!line) {
          err = line.error();
          break;
        }
        if (!*line) break;
        std::string& text = **line;
        if (json) {
          if (!text.empty() && text.back() == '\n') text.pop_back();
          nlohmann::json j = {{"role", ref.role}, {"replica", ref.replica}, {"line", text}};
          buf += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
          buf += '\n';
        } else {
          buf += prefix;
          buf += text;
          if (text.empty() || text.back() != '\n') buf += '\n';
        }
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
