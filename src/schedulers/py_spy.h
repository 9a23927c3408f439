// Reading a process's Python stacks on this host with py-spy (`torchx debug stack`), for the
// back-ends whose replicas are processes here (local_cwd; a Slurm or Ray node runs the same
// through its own way in).
#pragma once

#include <chrono>
#include <vector>

#include "core/subprocess.h"
#include "torchx/schedulers/stacks.h"

namespace torchx::schedulers {

/// A local replica's processes: its leader `pid`, the rest of its process group, and every
/// descendant of either (torchrun starts each worker rank in a session of its own), in pid order,
/// each with its command line and the RANK in its environment.
std::vector<ProcessStack> ReplicaProcesses(int pid);

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
