// The time seam: code that waits or reads the time (Runner::Wait, the local supervisor's drain and
// timestamps) does it through a Clock it is given, so tests drive time with a fake instead of
// sleeping.
#pragma once

#include <chrono>

namespace torchx {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point Now() const = 0;
  /// Seconds since the epoch (wall clock), for what is recorded for readers.
  virtual double EpochSeconds() const = 0;
  /// Blocks for `d` (a fake advances its time instead).
  virtual void SleepFor(std::chrono::milliseconds d) const = 0;
};

/// Real time. Stateless: every user may own one.
class SystemClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() const override;
  double EpochSeconds() const override;
  void SleepFor(std::chrono::milliseconds d) const override;
};

}  // namespace torchx
