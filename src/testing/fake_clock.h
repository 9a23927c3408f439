// Test-only: a Clock whose time moves only when the test (or a SleepFor) moves it; it records
// every sleep, so tests assert how long code would have waited without waiting.
#pragma once

#include <chrono>
#include <vector>

#include "torchx/clock.h"

namespace torchx::testing {

class FakeClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() const override { return std::chrono::steady_clock::time_point(now_); }
  double EpochSeconds() const override { return std::chrono::duration<double>(now_).count(); }
  void SleepFor(std::chrono::milliseconds d) const override {
    sleeps_.push_back(d);
    now_ += d;
  }
  void Advance(std::chrono::nanoseconds d) { now_ += d; }
  const std::vector<std::chrono::milliseconds>& sleeps() const { return sleeps_; }

 private:
  mutable std::chrono::nanoseconds now_{0};
  mutable std::vector<std::chrono::milliseconds> sleeps_;
};

}  // namespace torchx::testing
