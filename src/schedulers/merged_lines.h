// Several replicas' logs as one, each line prefixed with its replica ("trainer/1 "), as
// `torchx log` prints an app: what the dashboard's "all replicas" view and its download read.
// Lines of different replicas never mix; each replica's keep their order.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers {

struct PrefixedLog {
  std::string prefix;  ///< written before each line ("trainer/1 ")
  std::unique_ptr<LogIterator> lines;
};

/// Reads whichever log has lines ready, in turn, so a quiet replica holds none of the others
/// back; blocks (in one log's read) only when none is ready. Ends when every log has.
std::unique_ptr<LogIterator> MakeMergedLogIterator(std::vector<PrefixedLog> logs);

}  // namespace torchx::schedulers
