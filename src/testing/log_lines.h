// Test-only: drains a LogIterator (a followed one until its app ends).
#pragma once

#include <string>
#include <vector>

#include "torchx/schedulers/scheduler.h"
#include "torchx/status.h"

namespace torchx::testing {

/// Every line `it` yields, in order, or the first error it gives.
inline Result<std::vector<std::string>> ReadAllLines(schedulers::LogIterator& it) {
  std::vector<std::string> lines;
  while (true) {
    TORCHX_ASSIGN_OR_RETURN(auto line, it.Next());
    if (!line) return lines;
    lines.push_back(std::move(*line));
  }
}

}  // namespace torchx::testing
