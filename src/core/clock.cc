#include "torchx/clock.h"

#include <thread>

namespace torchx {

std::chrono::steady_clock::time_point SystemClock::Now() const { return std::chrono::steady_clock::now(); }

double SystemClock::EpochSeconds() const {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void SystemClock::SleepFor(std::chrono::milliseconds d) const { std::this_thread::sleep_for(d); }

}  // namespace torchx
