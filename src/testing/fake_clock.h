// Test-only: a Clock whose time moves only when the test (or a SleepFor) moves it; it records
// every sleep, so tests assert how long code would have waited without waiting. Thread-safe:
// followed logs and watchers call SleepFor from their own threads while the test advances time.
#pragma once

#include <chrono>
#include <mutex>
#include <vector>

#include "torchx/clock.h"

namespace torchx::testing {

class FakeClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return std::chrono::steady_clock::time_point(now_);
  }
  double EpochSeconds() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return std::chrono::duration<double>(now_).count();
  }
  void SleepFor(std::chrono::milliseconds d) const override {
    std::lock_guard<std::mutex> lock(mu_);
    sleeps_.push_back(d);
    now_ += d;
  }
  void Advance(std::chrono::nanoseconds d) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ += d;
  }
  /// A copy: another thread may be sleeping while the test reads.
  std::vector<std::chrono::milliseconds> sleeps() const {
    std::lock_guard<std::mutex> lock(mu_);
    return sleeps_;
  }

 private:
  mutable std::mutex mu_;
  mutable std::chrono::nanoseconds now_{0};
  mutable std::vector<std::chrono::milliseconds> sleeps_;
};

}  // namespace torchx::testing
