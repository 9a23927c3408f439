// Running an engine's command-line tool (sbatch, squeue, sacct, scancel) without a shell:
// argv as given, stdout and stderr captured, a time limit. Back-ends reach it through the
// CommandRunner seam so that their unit tests can answer in the tools' place.
#pragma once

#include <chrono>
#include <memory>
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
/// runs past `timeout`; kCancelled (after killing it) once this thread's CancelScope is cancelled.
/// A non-zero exit is not an error here: callers read exit_code. The tool gets the caller's
/// environment with `env_overrides` ("NAME=value") put over it.
Result<CommandResult> RunCommand(const std::vector<std::string>& argv, const std::string& cwd = {},
                                 std::chrono::milliseconds timeout = std::chrono::seconds(60),
                                 const std::vector<std::string>& env_overrides = {});

/// How a back-end runs its engine's tools: the real one is RunCommand; a test's fake records the
/// argv and answers with the tool's captured output, so no engine is needed. Same contract as
/// RunCommand (kNotFound for a missing tool, a non-zero exit is not an error). A back-end may
/// call it from more than one thread (a followed log asks for the job's state).
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  virtual Result<CommandResult> Run(const std::vector<std::string>& argv, const std::string& cwd,
                                    std::chrono::milliseconds timeout) = 0;
};

/// The real runner: RunCommand, with the caller's environment and PATH.
std::shared_ptr<CommandRunner> MakeSystemCommandRunner();

}  // namespace torchx::internal
