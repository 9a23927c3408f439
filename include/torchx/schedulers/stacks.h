// Stack dumps of a live app's processes (`torchx debug stack`): what each replica's processes (a
// torchrun agent and its worker ranks) are doing now, read with py-spy, and those stuck in the same
// place grouped, so that a hang reads as "3 ranks in all_reduce, 1 rank in stuck_here".
//
// A back-end with Capability::kStacks finds the processes (local_cwd: each replica's process
// group) and dumps each with DumpProcessStack (src/schedulers/py_spy.h); the grouping and the
// formats here are pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torchx/status.h"

namespace torchx::schedulers {

struct StackFrame {
  std::string function;
  std::string file;  ///< as py-spy shortens it (the package part), or the full path
  int line = 0;
  bool operator==(const StackFrame&) const = default;
};

struct ThreadStack {
  std::string name;  ///< "MainThread", ...
  int os_thread_id = 0;
  bool main = false;               ///< the process's main thread (its id is the pid)
  std::vector<StackFrame> frames;  ///< innermost first
};

/// One process of a replica, and what it was doing; `error` says why there is no stack (not a
/// Python process, attaching refused, py-spy missing), with the way to fix it where there is one.
struct ProcessStack {
  std::string role;
  int replica_id = 0;
  int pid = 0;
  std::string host;
  std::optional<int> rank;  ///< RANK in its environment (a torchrun worker's)
  std::string command;      ///< its command line, shortened
  std::vector<ThreadStack> threads;
  std::string error;
};

/// Which replicas to dump: all, one role, or one replica of a role.
struct StackOptions {
  std::string role;
  std::optional<int> replica_id;
};

/// A CPU profile of one replica (`torchx debug profile`): its processes sampled for `seconds`,
/// written to `output` as speedscope JSON (py-spy's).
struct ProfileOptions {
  std::string role;
  std::optional<int> replica_id;
  double seconds = 5;
  std::string output;  ///< the file to write
};

/// Processes whose main threads' stacks match frame for frame (function and file; lines may
/// differ): `members` index the input, in its order. Groups come largest first, then in the order
/// their first member appears; processes without a stack form no group.
struct StackGroup {
  std::vector<StackFrame> frames;  ///< the first member's main-thread stack, innermost first
  std::vector<size_t> members;
};
std::vector<StackGroup> GroupStacks(const std::vector<ProcessStack>& processes);

/// py-spy's `dump --json` output (a list of threads, innermost frame first) as threads; `pid` says
/// which is the main thread. kInvalidArgument naming what is wrong for anything else.
Result<std::vector<ThreadStack>> ParsePySpyDump(std::string_view json, int pid);

/// py-spy's text dump (`py-spy dump [--subprocesses]`: what Ray's dashboard answers for a
/// worker's traceback) as one ProcessStack per "Process <pid>:" section, its command and threads
/// filled (native frames, "name (library)", kept with line 0). kInvalidArgument when no section is
/// found.
Result<std::vector<ProcessStack>> ParsePySpyText(std::string_view text);

/// The "processes" of StacksToJson's output read back (what a node-side `torchx-stacks` prints).
/// kInvalidArgument naming what is wrong.
Result<std::vector<ProcessStack>> ProcessStacksFromJson(std::string_view text);

/// The grouped dump as people read it: each group headed by its count and innermost frame
/// ("3 processes in all_reduce (torch/distributed/distributed_c10d.py:2501)"), its members
/// (role/replica, pid, rank), then the stack; processes without a stack at the end with why.
std::string FormatStackGroups(const std::vector<ProcessStack>& processes);

/// {"groups": [{"count", "innermost", "frames": [...], "members": [...]}], "processes": [...]}:
/// the same as data (`torchx debug stack --json`, the dashboard).
std::string StacksToJson(const std::vector<ProcessStack>& processes);

}  // namespace torchx::schedulers
