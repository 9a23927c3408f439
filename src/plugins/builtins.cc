// The built-in plugins, registered explicitly (no discovery): schedulers, named resources,
// components and the CUDA device.
#include <filesystem>

#include "torchx/components/component.h"
#include "torchx/plugins/registry.h"
#include "torchx/specs/named_resources.h"

namespace torchx::plugins {
namespace {

// GPUs the NVIDIA driver exposes on this host (one directory per GPU), without running anything.
Result<int> CountNvidiaGpus() {
  std::error_code ec;
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    (void)e;
    ++n;
  }
  return n;
}

}  // namespace

void RegisterBuiltins(PluginRegistry& registry) {
  schedulers::SchedulerRegistry schedulers;
  schedulers::RegisterBuiltinSchedulers(schedulers);
  for (const std::string& name : schedulers.Names()) {
    (void)registry.AddScheduler(name, "builtin", [name](const std::string& session) {
      schedulers::SchedulerRegistry r;
      schedulers::RegisterBuiltinSchedulers(r);
      return r.Create(name, session);
    });
  }
  for (const std::string& name : specs::BuiltinNamedResourceNames()) {
    (void)registry.AddNamedResource(name, "builtin", [name] { return specs::GetNamedResource(name); });
  }
  // The builtin components live as long as the process (the registry is never destroyed).
  static auto* builtin_components = [] {
    auto* r = new components::ComponentRegistry();
    components::RegisterBuiltinComponents(*r);
    return r;
  }();
  for (const std::string& name : builtin_components->Names()) {
    const components::Component* c = *builtin_components->Find(name);
    (void)registry.AddComponent("builtin", std::shared_ptr<components::Component>(
                                               const_cast<components::Component*>(c), [](components::Component*) {}));
  }
  DevicePlugin cuda;
  cuda.name = "CUDA";
  cuda.env_template = {{"CUDA_VISIBLE_DEVICES", "{rank}"}};
  cuda.count_chips = CountNvidiaGpus;
  (void)registry.AddDevice("builtin", std::move(cuda));
}

}  // namespace torchx::plugins
