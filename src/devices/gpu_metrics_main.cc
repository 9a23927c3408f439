// torchx-gpu-metrics <parent pid>: NVML in a process of its own, so that the process that wants
// GPU figures (the local supervisor) never loads the driver's library and can be linked
// statically. It writes one line when NVML is open (or why it is not, and exits 1), then one
// reading per line it reads on stdin; it exits at EOF, and with its parent.
#include <sys/prctl.h>
#include <unistd.h>

#include <charconv>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "devices/gpu_metrics_wire.h"
#include "torchx/devices/gpu_metrics.h"

namespace {

void WriteLine(const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
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
