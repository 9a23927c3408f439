// Reading a process's Python stacks on this host with py-spy (`torchx debug stack`), for the
// back-ends whose replicas are processes here (local_cwd; a Slurm or Ray node runs the same
// through its own way in).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/subprocess.h"
#include "torchx/schedulers/stacks.h"

namespace torchx::schedulers {

/// A local replica's processes: its leader `pid`, the rest of its process group, and every
/// descendant of either (torchrun starts each worker rank in a session of its own), in pid order,
/// each with its command line and the RANK in its environment.
std::vector<ProcessStack> ReplicaProcesses(int pid);

/// A condition on a process's environment: `name` set to `value`, set to anything but `value`
/// (`differs`), or set at all (no value).
struct EnvRule {
  std::string name;
  std::optional<std::string> value;
  bool differs = false;
};

/// Every process on this host readable by this user whose environment meets all `rules` (a Slurm
/// job's processes on one node: SLURM_JOB_ID, SLURMD_NODENAME), in pid order, as
/// ReplicaProcesses gives them; `torchx-stacks` and `py-spy` processes are never among them (a
/// dump running beside them in the same job).
std::vector<ProcessStack> ProcessesByEnvironment(const std::vector<EnvRule>& rules);

/// Of `processes` (pid order), the first Python one whose parent is not among them: the top of
/// the tree a profile follows with its subprocesses. nullopt where none is a Python one.
std::optional<int> TopPythonProcess(const std::vector<ProcessStack>& processes);

/// Whether `pid` runs a Python interpreter (its executable, or a libpython it maps).
bool IsPythonProcess(int pid);

/// Fills `p.threads` from `py-spy dump --json --pid p.pid`, or `p.error` with why not and the fix:
/// no py-spy beside the process's interpreter nor on PATH (`pip install py-spy`), a kernel that
/// lets nobody but a parent or root attach (kernel.yama.ptrace_scope), a process that is no Python
/// one, or py-spy's own error (a container without SYS_PTRACE).
void DumpProcessStack(ProcessStack& p, internal::CommandRunner& runner,
                      std::chrono::milliseconds timeout = std::chrono::seconds(10));

/// Samples the Python process `pid` and its subprocesses for `seconds` (`py-spy record`) and
/// writes speedscope JSON to `output`; the same reasons as DumpProcessStack when it cannot.
Status RecordProfile(int pid, double seconds, const std::string& output, internal::CommandRunner& runner);

}  // namespace torchx::schedulers
