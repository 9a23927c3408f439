// Running an engine's command-line tool (sbatch, squeue, sacct, scancel) without a shell:
// argv as given, stdout and stderr captured, a time limit.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "torchx/status.h"

namespace torchx::internal {

struct CommandResult {
  int exit_code = 0;  ///< 128 + signal when killed by one
  std::string out;
  std::string err;
};

/// kNotFound when argv[0] cannot be found on PATH; kDeadlineExceeded (after killing it) when it
/// runs past `timeout`. A non-zero exit is not an error here: callers read exit_code.
Result<CommandResult> RunCommand(const std::vector<std::string>& argv, const std::string& cwd = {},
                                 std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace torchx::internal
