// torchx-composite-driver <state_dir> <id> [sweep|managed]: moves one composite job forward until
// it ends: a pipeline (each step submitted when its dependencies have succeeded), with `sweep` a
// sweep (trials submitted while fewer than max_parallel run), with `managed` a managed job (its app
// submitted again after an infrastructure failure). Started detached by `torchx pipeline run`
// / `torchx sweep run` (and again by a status call if it died); one per composite (an flock).
#include <cstdio>
#include <exception>
#include <string>

#include "torchx/composite/driver.h"
#include "torchx/composite_kinds.h"
#include "torchx/plugins/registry.h"

int main(int argc, char** argv) {
  std::string kind = argc == 4 ? argv[3] : "pipeline";
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: torchx-composite-driver <state_dir> <id> [sweep|managed]\n");
    return 2;
  }
  // The process the launcher waits for exits as soon as the driver holds the composite's lock.
  int exit_code = 0;
  int ready_fd = torchx::composite::DaemonizeDriver(exit_code);
  if (ready_fd < 0) return exit_code;
  try {
    // The same composition as the CLI's: children may run on any scheduler it knows.
    torchx::plugins::PluginRegistry registry;
    torchx::plugins::RegisterBuiltins(registry);
    torchx::plugins::AddPythonBridgeProvider(registry);
    torchx::RegisterCompositeKinds(registry);
    return torchx::RunCompositeDriver(registry, kind, argv[1], argv[2], ready_fd);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torchx-composite-driver: internal error: %s\n", e.what());
    return 1;
  }
}
