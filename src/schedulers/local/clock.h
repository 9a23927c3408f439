// The supervisor's time seam: the only places it reads a clock (the bounded drain of output at
// the end, the summary's timestamp) go through Clock, so nothing else in it depends on real time.
// The kill-grace timer is the event loop's (event_loop.h); the policy only asks to arm it.
#pragma once

#include <chrono>

#include "schedulers/local/state_store.h"

namespace torchx::schedulers::local {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point Now() const = 0;
  /// Seconds since the epoch (wall clock), for what is recorded for readers.
  virtual double EpochSeconds() const = 0;
};

class SystemClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() const override { return std::chrono::steady_clock::now(); }
  double EpochSeconds() const override { return NowSeconds(); }
};

}  // namespace torchx::schedulers::local
