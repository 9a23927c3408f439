// The entry point of a scheduler back-end built as a loadable module. The same source is linked
// into the core or built as a module (DuckDB's extension model); CMake generates the module's
// entry file (torchx_add_backend ... LOADABLE), and the plugin registry loads the module the
// first time one of its schedulers is asked for, so a call that never uses the back-end never
// loads it or the libraries it needs (libcurl for local_docker and kubernetes).
//
// Module and host pass C++ types to each other, so they must come from the same build: the
// module exports the build id it was compiled with and the host refuses any other.
#pragma once

#include <vector>

#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers {

struct BackendModule {
  const char* build_id;                      ///< TORCHX_BUILD_ID of the build that made the module
  std::vector<SchedulerEntry> (*entries)();  ///< the back-end's BackendSchedulers()
};

}  // namespace torchx::schedulers

/// extern "C" const torchx::schedulers::BackendModule* torchx_backend_module_v1();
#define TORCHX_BACKEND_MODULE_SYMBOL "torchx_backend_module_v1"
