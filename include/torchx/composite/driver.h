// The detached driver every composite kind (pipelines, sweeps, managed jobs) runs in: what its
// executable's main needs from the kernel.
#pragma once

namespace torchx::composite {

/// Daemonizes the composite driver (forks; the launcher reaps the first process once the driver
/// is ready). Returns the write end of the readiness pipe in the driver, or -1 in the first
/// process with `exit_code` set.
int DaemonizeDriver(int& exit_code);

}  // namespace torchx::composite
