// What a verb that waits on an app (`run --wait/--log`, `pipeline run --wait`, `sweep run --wait`)
// does when it is interrupted by Ctrl-C (SIGINT) or SIGTERM: an app on this host (its schedulers
// declare Capability::kInterruptCancels: TorchX's local schedulers) is cancelled and waited for, so
// that no replica outlives the launcher that was watching it; an app elsewhere keeps running and the
// `torchx cancel` line is printed, as TorchX leaves remote jobs running. Either way the process
// exits 128 + the signal (130 after SIGINT, 143 after SIGTERM; docs/cli.md).
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "torchx/runner/runner.h"

namespace torchx::cli {

/// Whether an interrupted wait on work running on these schedulers cancels it: one of them runs
/// its apps on this host.
bool InterruptCancels(runner::Runner& runner, const std::vector<std::string>& schedulers);

/// While alive, SIGINT and SIGTERM are taken by a thread of its own (through a self-pipe: the
/// signal mask is left alone, so that every process started meanwhile inherits the usual one). The
/// first signal cancels `handle` (when `cancel`) and ends the process by that signal (exit status
/// 128 + it); a second one while cancelling only says that the cancel goes on. A signal ignored
/// when the watch starts stays ignored. The destructor restores the previous handlers.
class InterruptWatch {
 public:
  InterruptWatch(runner::Runner& runner, std::string handle, bool cancel);
  ~InterruptWatch();
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  /// Called by the waiting thread once its wait returned: when a signal came, the app ended
  /// because of it, so this blocks until the watch thread has said so and ended the process;
  /// otherwise it ends the watch (the previous handlers are back).
  void SettleIfInterrupted();

 private:
  void Stop();
  void Watch();
  void Handle(int sig);

  runner::Runner& runner_;
  std::string handle_;
  bool cancel_;
  std::thread thread_;
};

}  // namespace torchx::cli
