#include "schedulers/docker/container_end.h"

#include <fmt/format.h>

namespace torchx::schedulers::docker {

FailureReport ClassifyContainerEnds(const std::vector<ContainerEnd>& ends) {
  for (const ContainerEnd& e : ends) {
    if (!e.error.empty())
      return {FailureCause::kEngineLost, fmt::format("{}: the engine says: {}", e.replica, e.error)};
  }
  for (const ContainerEnd& e : ends) {
    if (e.oom_killed) {
      return {FailureCause::kOutOfMemory,
              fmt::format("{} was killed for running out of memory (OOMKilled, exit code {})", e.replica, e.exit_code)};
    }
  }
  auto killed = [](const ContainerEnd& e) { return e.exit_code == 137 || e.exit_code == 143; };
  for (const ContainerEnd& e : ends) {
    if (!e.cancelled && e.exit_code != 0 && !killed(e)) {
      return {FailureCause::kUserError, fmt::format("{} exited with code {}", e.replica, e.exit_code)};
    }
  }
  for (const ContainerEnd& e : ends) {
    if (!e.cancelled && killed(e)) {
      return {FailureCause::kCancelled,
              fmt::format("{} was killed from outside the launcher (docker kill or docker stop: exit code {})",
                          e.replica, e.exit_code)};
    }
  }
  for (const ContainerEnd& e : ends) {
    if (e.cancelled) return {FailureCause::kCancelled, "cancelled"};
  }
  return {FailureCause::kUnknown, ""};
}

}  // namespace torchx::schedulers::docker
