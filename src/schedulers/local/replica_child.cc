// The replica's side of a start (see replica_child.h).
#include "schedulers/local/replica_child.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <initializer_list>

namespace torchx::schedulers::local {
namespace {

[[noreturn]] TORCHX_CHILD_CODE void ChildFailed(ReplicaChildArgs* a) {
  a->error = errno;
  if (a->error_fd >= 0) (void)!::write(a->error_fd, &a->error, sizeof(a->error));
  _exit(127);
}

}  // namespace

TORCHX_CHILD_CODE int ReplicaChildMain(void* p) {
  auto* a = static_cast<ReplicaChildArgs*>(p);
  // Started sharing the supervisor's descriptor table (CLONE_FILES): its own copy of the low
  // descriptors only (its pipes are there; every long-lived one is at kHighFds or above) before
  // anything changes a descriptor. Where the kernel cannot (before 5.9), a copy of the whole table.
  if (a->copy_below > 0 && close_range(a->copy_below, ~0U, CLOSE_RANGE_UNSHARE) != 0 && unshare(CLONE_FILES) != 0) {
    _exit(127);  // still sharing: nothing below may run
  }
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // replica leaders never outlive a killed supervisor
  if (getppid() != a->supervisor) _exit(127);
  // What a caller ignores (Python ignores SIGPIPE and SIGXFSZ) would stay ignored through the exec.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGPIPE, SIGXFSZ}) sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(a->out_fd, 1) < 0 || dup2(a->err_fd, 2) < 0) ChildFailed(a);
  if (chdir(a->cwd) != 0) ChildFailed(a);
  // Nothing the supervisor inherited from whoever started it reaches the replica (a caller's
  // open files, a terminal's descriptors): its stdio only, as Popen's close_fds gives. The error
  // pipe is close-on-exec already, so it stays usable until the exec. Kernels before 5.11 lack
  // the flag; there, what the supervisor inherited stays as it was.
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  execve(a->path, a->argv, a->envp);
  ChildFailed(a);
}

}  // namespace torchx::schedulers::local
