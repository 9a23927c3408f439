// Identifying a process across time: a pid alone can be reused, so the local scheduler records
// "<boot id>:<start time in clock ticks>" and only signals a pid whose identity still matches.
#pragma once

#include <string>

namespace torchx::schedulers::local {

/// This boot's id (/proc/sys/kernel/random/boot_id); a reboot changes it.
const std::string& BootId();

/// The identity of a running (not zombie) process, or "" if there is none with that pid.
std::string ProcessIdentity(int pid);

/// The boot-time clock (CLOCK_BOOTTIME, what a process's start time in /proc is measured on), ns.
long long BoottimeNs();

/// The identity of child `pid`, created by a clone between BoottimeNs() readings `before_ns` and
/// `after_ns`: the kernel stamped its start inside that interval, so when both readings fall in
/// the same clock tick that tick is its start time, with no /proc read (a fan-out's starts read
/// 500 fresh /proc entries otherwise); else ProcessIdentity(pid). Unlike ProcessIdentity, a
/// child that has already exited (not yet reaped) still has its identity.
std::string NewChildIdentity(int pid, long long before_ns, long long after_ns);

/// Whether `pid` is still the process that had `identity`.
bool IsSameProcess(int pid, const std::string& identity);

/// Whether `identity` was taken during an earlier boot.
bool FromEarlierBoot(const std::string& identity);

/// Sends `sig` to process group `pgid` only if its leader is still the recorded process.
/// Returns whether the signal was sent.
bool SignalGroupIfSame(int pgid, const std::string& identity, int sig);

/// Like SignalGroupIfSame, but also reaches a group whose leader has exited while its children
/// (e.g. torchrun's workers) live on: the kernel does not reuse a pid while a process group of
/// that id exists, so when no process has the pid, any group with that id is still ours.
bool SignalGroupOrLeftovers(int pgid, const std::string& identity, int sig);

}  // namespace torchx::schedulers::local
