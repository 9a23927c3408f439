// A child Python process speaking JSON lines: requests on its stdin, replies on a dedicated fd
// ($TORCHX_BRIDGE_FD), so that prints of user code go to our stderr. Used by the CLI for Python
// component files and Python plugins; started only when one is needed. The interpreter is
// $TORCHX_PYTHON, else the python3 beside this executable (a virtual env's bin/), else python3 on
// PATH.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "torchx/status.h"

namespace torchx::internal {

/// The interpreter the bridge starts: $TORCHX_PYTHON, else the python3 beside this executable,
/// else "python3" (found on PATH when started).
std::string PythonInterpreter();

class PythonBridge {
 public:
  PythonBridge() = default;
  ~PythonBridge();
  PythonBridge(const PythonBridge&) = delete;
  PythonBridge& operator=(const PythonBridge&) = delete;

  /// Starts `python -u -m <module>`. kFailedPrecondition when no interpreter can be started.
  /// `bounded`: the child gets a process group of its own, a call past its limit (Call's
  /// `timeout`) kills the whole group, and the destructor waits for it at most a few seconds
  /// before killing it too: what a component file started at import cannot outlive the bridge
  /// (the dashboard's loads); a call under a cancelled CancelScope stops it the same way.
  /// Unbounded (the CLI, the process's one plugin bridge), the destructor waits for the child and
  /// no caller's scope stops it: what it holds is the whole process's.
  Status Start(const std::string& module, const std::string& purpose, bool bounded = false);
  /// Sends one request line and returns the reply line. kFailedPrecondition when the child exited
  /// without answering (e.g. the torchx package is not importable). With `timeout`, a child that
  /// has not answered by then is killed and the call is kDeadlineExceeded (the dashboard's limit
  /// on loading a component whose file may do anything at import); the bridge is then stopped.
  Result<std::string> Call(const std::string& request_json,
                           std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  bool started() const { return pid_ > 0; }

 private:
  void Kill();

  std::string python_, module_, purpose_;
  pid_t pid_ = -1;
  pid_t group_ = -1;  // bounded: the child's process group, killed with what it started
  bool bounded_ = false;
  FILE* to_child_ = nullptr;
  int from_child_ = -1;  // read with poll, so that a reply can be waited for with a limit
  std::string pending_;  // what was read past the last reply
};

}  // namespace torchx::internal
