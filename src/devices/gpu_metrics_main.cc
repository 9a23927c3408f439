// torchx-gpu-metrics <parent pid>: NVML in a process of its own, so that the process that wants
// GPU figures (the local supervisor) never loads the driver's library and can be linked
// statically. It writes one line when NVML is open (or why it is not, and exits 1), then one
// reading per line it reads on stdin; it exits at EOF, and with its parent.
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "devices/gpu_metrics_wire.h"
#include "torchx/devices/gpu_metrics.h"

namespace {

// The replies' descriptor: the socket the parent gave as stdout, moved off fd 1 so that what the
// driver's library itself prints there goes to stderr, not into the protocol.
int reply_fd = -1;

void WriteLine(std::string line) {
  line += '\n';
  for (size_t done = 0; done < line.size();) {
    ssize_t n = ::write(reply_fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) std::exit(1);  // the parent is gone
    done += static_cast<size_t>(n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int parent = 0;
  std::string_view arg = argc == 2 ? argv[1] : "";
  if (std::from_chars(arg.data(), arg.data() + arg.size(), parent).ec != std::errc() || parent <= 1) {
    std::fprintf(stderr, "usage: torchx-gpu-metrics <parent pid>\n");
    return 2;
  }
  // A parent that dies mid-reading (killed) does not leave this holding the driver open.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) return 1;
  reply_fd = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (reply_fd < 0 || ::dup2(2, 1) < 0) return 1;
  using torchx::devices::internal::GpuReadingToLine;
  auto nvml = torchx::devices::OpenNvml();
  if (!nvml) {
    WriteLine(GpuReadingToLine(nvml.error()));
    return 1;
  }
  WriteLine(GpuReadingToLine(std::vector<torchx::devices::GpuDeviceSample>{}));
  std::string request;
  while (std::getline(std::cin, request)) WriteLine(GpuReadingToLine((*nvml)->Sample()));
  return 0;
}
