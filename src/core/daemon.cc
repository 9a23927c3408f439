#include "core/daemon.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace torchx::internal {

namespace {
constexpr char kReady = 'y';
constexpr char kFailed = 'n';
}  // namespace

int ForkUntilReady(int& parent_exit) {
  parent_exit = 1;
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return -1;
  pid_t child = ::fork();
  if (child < 0) {
    ::close(ready[0]);
    ::close(ready[1]);
    return -1;
  }
  if (child > 0) {
    ::close(ready[1]);
    char c = 0;
    ssize_t n;
    do {
      n = ::read(ready[0], &c, 1);
    } while (n < 0 && errno == EINTR);
    ::close(ready[0]);
    parent_exit = n == 1 ? (c == kReady ? 0 : 1) : kDiedBeforeReady;
    return -1;
  }
  ::close(ready[0]);
  return ready[1];
}

std::optional<bool> AwaitReport(int fd) {
  char c = 0;
  ssize_t n;
  do {
    n = ::read(fd, &c, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1) return std::nullopt;
  return c == kReady;
}

void ReportReady(int& ready_fd, bool ok) {
  if (ready_fd < 0) return;
  char c = ok ? kReady : kFailed;
  ssize_t n;
  do {
    n = ::write(ready_fd, &c, 1);
  } while (n < 0 && errno == EINTR);
  ::close(ready_fd);
  ready_fd = -1;
}

}  // namespace torchx::internal
