// A back-end module from "another build" (its build id is not this build's), and one that is not
// a back-end at all: the registry must refuse both with a clear error instead of calling into them.
#include "torchx/schedulers/backend_module.h"

#ifdef STALE_BUILD
namespace {
std::vector<torchx::schedulers::SchedulerEntry> NoEntries() { return {}; }
}  // namespace

extern "C" __attribute__((visibility("default"))) const torchx::schedulers::BackendModule* torchx_backend_module_v1() {
  static const torchx::schedulers::BackendModule kModule{"0.0.0+another-build", &NoEntries};
  return &kModule;
}
#else
extern "C" __attribute__((visibility("default"))) int not_a_backend() { return 0; }
#endif
