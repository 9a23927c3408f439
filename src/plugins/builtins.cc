// The built-in plugins, registered explicitly (no discovery): the back-ends of this build (linked
// in, or loadable modules registered by name and loaded on first use), the named resource tables, the builtin components and the CUDA device.
#include <filesystem>

#include "plugins/backend_modules.h"
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
  for (const BuiltinBackend& backend : BuiltinBackends()) {
    if (!backend.linked) {
      AddLoadableBackend(registry, backend);
      continue;
    }
    for (schedulers::SchedulerEntry& entry : backend.linked()) {
      (void)registry.AddScheduler(std::move(entry.name), "builtin", std::move(entry.factory));
    }
  }
  for (const std::string& name : specs::BuiltinNamedResourceNames()) {
    (void)registry.AddNamedResource(name, "builtin", [name] { return specs::GetNamedResource(name); });
  }
  for (auto& component : components::BuiltinComponents()) (void)registry.AddComponent("builtin", std::move(component));
  DevicePlugin cuda;
  cuda.name = "CUDA";
  cuda.env_template = {{"CUDA_VISIBLE_DEVICES", "{rank}"}};
  cuda.count_chips = CountNvidiaGpus;
  (void)registry.AddDevice("builtin", std::move(cuda));
}

}  // namespace torchx::plugins
