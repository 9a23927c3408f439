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

Result<std::vector<ReplicaRef>> AllReplicas(const std::string& handle) {
  runner::Runner runner;
  TORCHX_ASSIGN_OR_RETURN(auto app, runner.Describe(handle));
  if (!app) return AppNotFound(handle);
  std::vector<ReplicaRef> out;
  for (const specs::Role& role : app->roles) {
    for (int i = 0; i < role.num_replicas; ++i) out.push_back({role.name, i});
  }
  return out;
}

Status StreamLogs(const std::string& handle, const std::vector<ReplicaRef>& replicas,
                  const schedulers::LogOptions& options, bool json) {
  std::mutex mu;
  Status first_error;
  bool color = StdoutIsTerminal() && !json;
  auto worker = [&](const ReplicaRef& ref) {
    runner::Runner runner;  // one per thread: a Runner is not shared across threads
    schedulers::LogOptions opts = options;
    opts.role = ref.role;
    opts.replica = ref.replica;
    auto it = runner.LogLines(handle, opts);
    Status err = it.status();
    if (it) {
      std::string prefix = color ? fmt::format("\033[32m{}/{}\033[0m ", ref.role, ref.replica)
                                 : fmt::format("{}/{} ", ref.role, ref.replica);
      while (true) {
        auto line = (*it)->Next();
        if (!line) {
          err = line.error();
          break;
        }
        if (!*line) break;
        std::string text = std::move(**line);
        std::lock_guard<std::mutex> lock(mu);
        if (json) {
          if (!text.empty() && text.back() == '\n') text.pop_back();
          nlohmann::json j = {{"role", ref.role}, {"replica", ref.replica}, {"line", text}};
          std::string out = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
          std::fwrite(out.data(), 1, out.size(), stdout);
        } else {
          if (text.empty() || text.back() != '\n') text += '\n';
          std::string out = prefix + text;
          std::fwrite(out.data(), 1, out.size(), stdout);
        }
        std::fflush(stdout);
      }
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
