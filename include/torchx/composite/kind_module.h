// The entry point of a composite kind built as a loadable module: a kind this build does not link
// in (the test-only kind of tests/composite_ring/) added to the CLI, the composite driver, the
// dashboard's server and the Python module by naming its file in $TORCHX_COMPOSITE_KINDS, with no
// line of theirs naming it. torchx_add_composite_kind (cmake/TorchxHelpers.cmake) builds one.
//
// Module and host pass C++ types to each other, so they must come from the same build: the module
// exports the build id it was compiled with and the host refuses any other.
#pragma once

#include <string>

#include "torchx/composite/launch.h"
#include "torchx/plugins/registry.h"

namespace torchx::composite {

/// One composite kind, as the host sees it whether linked in or loaded.
struct KindEntry {
  /// Its scheduler's name: what its handles carry, what its driver is started with, what
  /// LaunchRequest::kind names.
  const char* name;
  /// Adds its scheduler to the registry (which must outlive what it builds).
  void (*register_scheduler)(plugins::PluginRegistry& registry);
  /// Its driver's body for composite `id` under `state_dir` (`ready_fd` gets 'y' once it holds the
  /// composite's lock); a process exit code.
  int (*run_driver)(plugins::PluginRegistry& registry, const std::string& state_dir, const std::string& id,
                    int ready_fd);
  /// Plans a launch from its document.
  Planner plan;
};

struct KindModule {
  const char* build_id;  ///< TORCHX_BUILD_ID of the build that made the module
  KindEntry kind;
};

}  // namespace torchx::composite

/// extern "C" const torchx::composite::KindModule* torchx_composite_kind_v1();
#define TORCHX_COMPOSITE_KIND_SYMBOL "torchx_composite_kind_v1"
/// The modules a process loads: their paths, ':'-separated.
#define TORCHX_COMPOSITE_KINDS_ENV "TORCHX_COMPOSITE_KINDS"
