#include "wait_display.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include <fmt/format.h>

namespace torchx::cli {
namespace {

std::string Colored(specs::AppState s, bool tty) {
  std::string name(specs::AppStateName(s));
  if (!tty) return name;
  const char* color = s == specs::AppState::kSucceeded ? "32"
                      : s == specs::AppState::kFailed  ? "31"
                      : s == specs::AppState::kRunning ? "36"
                                                       : "33";
  return fmt::format("\033[{}m{}\033[0m", color, name);
}

}  // namespace

Result<std::optional<specs::AppStatus>> WaitWithDisplay(runner::Runner& runner, const std::string& handle) {
  bool tty = ::isatty(2) == 1;
  std::map<std::string, specs::AppState> last;
  std::optional<specs::AppState> last_app;
  int drawn = 0;
  auto delay = std::chrono::milliseconds(10);
  auto start = std::chrono::steady_clock::now();
  while (true) {
    TORCHX_ASSIGN_OR_RETURN(auto status, runner.Status(handle));
    if (!status) return status;
    if (tty) {
      std::string block;
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      block += fmt::format("\033[2K{}  {}  {:.1f}s  restarts: {}\n", handle, Colored(status->state, true), secs,
                           status->num_restarts);
      int lines = 1;
      for (const auto& role : status->roles) {
        for (const auto& r : role.replicas) {
          block += fmt::format("\033[2K  {}/{}  {}\n", role.role, r.id, Colored(r.state, true));
          ++lines;
        }
      }
      std::string up = drawn ? fmt::format("\033[{}A", drawn) : "";
      std::fputs((up + block).c_str(), stderr);
      drawn = lines;
    } else {
      if (!last_app || *last_app != status->state) {
        std::fprintf(stderr, "torchx: %s %s\n", handle.c_str(),
                     std::string(specs::AppStateName(status->state)).c_str());
        last_app = status->state;
      }
      for (const auto& role : status->roles) {
        for (const auto& r : role.replicas) {
          std::string key = fmt::format("{}/{}", role.role, r.id);
          auto it = last.find(key);
          if (it == last.end() || it->second != r.state) {
            std::fprintf(stderr, "torchx:   %s %s\n", key.c_str(), std::string(specs::AppStateName(r.state)).c_str());
            last[key] = r.state;
          }
        }
      }
    }
    std::fflush(stderr);
    if (status->is_terminal()) return status;
    runner.WaitForUpdate(handle, delay);  // returns at once when the app ends
    delay = std::min(std::chrono::milliseconds(200), delay * 3 / 2 + std::chrono::milliseconds(1));
  }
}

}  // namespace torchx::cli
