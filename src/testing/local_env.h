// Test helpers for the local scheduler: a private state directory per test (set through
// TORCHX_STATE_DIR, restored after), and waiting for an app to end.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "testing/temp_dir.h"
#include "torchx/runner/runner.h"

namespace torchx::testing {

class LocalSchedulerEnv {
 public:
  LocalSchedulerEnv() : state_env_("TORCHX_STATE_DIR", dir_.path().c_str()) {}
  const std::string& state_dir() const { return dir_.path(); }
  const ScopedTempDir& dir() const { return dir_; }

 private:
  ScopedTempDir dir_;
  ScopedEnv state_env_;
};

/// Waits (polling every 20 ms) up to `timeout` for a terminal state.
inline std::optional<specs::AppStatus> WaitTerminal(runner::Runner& r, const std::string& handle,
                                                    std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  auto s = r.Wait(handle, std::chrono::milliseconds(20), timeout);
  if (!s.has_value()) return std::nullopt;
  return *s;
}

}  // namespace torchx::testing
