// What a verb that waits on an app (`run --wait/--log`, `pipeline run --wait`, `sweep run --wait`)
// does when it is interrupted by Ctrl-C (SIGINT) or SIGTERM: an app on this host (its schedulers
// declare Capability::kInterruptCancels: TorchX's local schedulers) is cancelled and waited for, so
// that no replica outlives the launcher that was watching it; an app elsewhere keeps running and the
// `torchx cancel` line is printed, as TorchX leaves remote jobs running. Either way the process
// exits 128 + the signal (130 after SIGINT, 143 after SIGTERM; docs/cli.md).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "torchx/runner/runner.h"

namespace torchx::cli {

/// Whether an interrupted wait on work running on these schedulers cancels it: one of them runs
/// its apps on this host.
bool InterruptCancels(runner::Runner& runner, const std::vector<std::string>& schedulers);

/// While alive, SIGINT and SIGTERM are taken by a thread of its own (through a self-pipe: the
/// signal mask is left alone, so that every process started meanwhile inherits the usual one).
/// Made before the launch, so that a signal during it is not lost: the first signal waits for
/// Arm (the launch's handle) and cancels that app (when `cancel`), or, when the launch made none,
/// only ends the process; either way the process ends by that signal (exit status 128 + it). A
/// second signal while cancelling only says that the cancel goes on. A signal ignored when the
/// watch starts stays ignored. The destructor restores the previous handlers.
class InterruptWatch {
 public:
  InterruptWatch(runner::Runner& runner, bool cancel);
  ~InterruptWatch();
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  /// The launch made `handle`: what a signal cancels from now on.
  void Arm(std::string handle);
  /// Called by the waiting thread once its wait returned: when a signal came, the app ended
  /// because of it, so this blocks until the watch thread has said so and ended the process;
  /// otherwise it ends the watch (the previous handlers are back).
  void SettleIfInterrupted();

 private:
  void LaunchOver(std::optional<std::string> handle);
  void Stop();
  void Watch();
  void Handle(int sig, const std::string& handle);
  [[noreturn]] static void EndBy(int sig);

  runner::Runner& runner_;
  bool cancel_;
  std::mutex mu_;
  std::condition_variable launched_;
  bool launch_over_ = false;
  std::optional<std::string> handle_;
  std::thread thread_;
};

}  // namespace torchx::cli
