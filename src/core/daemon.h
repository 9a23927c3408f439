// Starting a detached helper that tells its launcher when it is up (the local app's supervisor,
// the pipeline driver): the process forks, the first half waits for one byte on a pipe and exits
// with what it says, so the launcher (which reaps it at once) learns whether the helper got as
// far as running, while the second half goes on detached.
#pragma once

#include <optional>

namespace torchx::internal {

/// Forks. In the child, returns the write end of the readiness pipe (close-on-exec), for
/// ReportReady. In the parent, waits for that report (or the child's end) and returns -1 with
/// `parent_exit` set: 0 when the child reported ready, 1 when it reported failure, and
/// kDiedBeforeReady when it died first (killed: its caller may simply try again). A failed pipe
/// or fork returns -1 with `parent_exit` 1, in the only process there is.
int ForkUntilReady(int& parent_exit);

/// The launcher's exit code when the child it forked died before it reported (ForkUntilReady).
inline constexpr int kDiedBeforeReady = 3;

/// The child's report: ready (`ok`) or failed; then the pipe is closed. A no-op for fd < 0.
void ReportReady(int& ready_fd, bool ok);

/// Reads a ReportReady from `fd` (a pipe's read end): true (ready), false (failed), nullopt when
/// the writer closed it without a word (it died first).
std::optional<bool> AwaitReport(int fd);

}  // namespace torchx::internal
