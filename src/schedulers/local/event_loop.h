// The supervisor's event loop: one epoll set over a signalfd (the signals it handles, blocked
// for normal delivery), a timerfd (the kill-grace timer), another for the resource sampler, and
// the replicas' output pipes. It
// sleeps in epoll_wait, so an app whose replicas are quiet costs the supervisor no CPU.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "torchx/status.h"

namespace torchx::schedulers::local {

class EventLoop {
 public:
  enum class Source { kSignal, kTimer, kTicker, kFd };
  struct Ready {
    Source source;
    int fd;  ///< for kFd
  };

  /// Blocks `signals` and receives them through a signalfd from then on.
  static Result<std::unique_ptr<EventLoop>> Create(const std::vector<int>& signals);
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  /// Reports `fd` as Source::kFd when it is readable (or at EOF).
  void Watch(int fd);
  void Unwatch(int fd);

  /// One-shot; re-arming replaces the previous deadline. A zero delay still fires.
  void ArmTimer(double seconds);
  void DisarmTimer();

  /// A second, periodic timer (the resource sampler's): Source::kTicker after `first` seconds,
  /// then every `interval`. Its timerfd is made on the first call.
  void StartTicker(double first, double interval);

  /// What is ready, in the kernel's order; waits up to `timeout_ms` (-1: forever). An expired
  /// timer is acknowledged here. Empty on timeout or interruption.
  std::vector<Ready> Wait(int timeout_ms);

  /// The pending signals, in arrival order (drains the signalfd). A SIGTERM queued with a value
  /// (a cancel, sigqueue) other than the one IgnoreCancelsOtherThan names is dropped: it was
  /// meant for an app this process ran before.
  std::vector<int> TakeSignals();
  void IgnoreCancelsOtherThan(int token) { cancel_token_ = token; }
  /// How many SIGTERMs TakeSignals dropped since the last call. SIGTERM does not queue: a cancel
  /// of this app sent while a stale one was pending was merged into it, so the caller checks
  /// the store's cancel flag when this is not zero.
  int TakeDroppedCancels() { return std::exchange(dropped_cancels_, 0); }

 private:
  EventLoop(int epfd, int sigfd, int timerfd) : epfd_(epfd), sigfd_(sigfd), timerfd_(timerfd) {}

  int epfd_, sigfd_, timerfd_;
  int tickerfd_ = -1;
  int cancel_token_ = -1;  // -1: every SIGTERM counts
  int dropped_cancels_ = 0;
};

}  // namespace torchx::schedulers::local
