// The built-in plugins, registered explicitly (no discovery): the back-ends of this build (linked
// in, or loadable modules registered by name and loaded on first use), the named resource tables, the builtin
// components and the CUDA device.
#include <chrono>
#include <string_view>

#include "core/subprocess.h"
#include "plugins/backend_modules.h"
#include "torchx/components/component.h"
#include "torchx/plugins/registry.h"
#include "torchx/specs/named_resources.h"

namespace torchx::plugins {
namespace {

// GPUs this process may use, as `nvidia-smi -L` lists them (TorchX's local scheduler counts the
// same way): 0 where it is missing or fails. Not /proc/driver/nvidia/gpus, which a container sees
// whole, whichever GPUs it was given. The one GPU count: the local scheduler's
// auto_set_cuda_visible_devices, `dist.ddp -j ...xauto` and Python's LocalScheduler ask the CUDA
// device for it. Asked only when one of them needs it.
Result<int> CountNvidiaGpus() {
  auto listed = internal::RunCommand({"nvidia-smi", "-L"}, {}, std::chrono::seconds(30));
  if (!listed || listed->exit_code != 0) return 0;
  int n = 0;
  std::string_view out = listed->out;
  while (!out.empty()) {
    size_t nl = out.find('\n');
    if (out.substr(0, 4) == "GPU ") ++n;
    if (nl == std::string_view::npos) break;
    out.remove_prefix(nl + 1);
  }
  return n;
}

}  // namespace

std::string DefaultSchedulerName() {
  static const std::string kName = [] {
    std::vector<BuiltinBackend> backends = BuiltinBackends();
    return backends.empty() || backends.front().schedulers.empty() ? std::string()
                                                                   : backends.front().schedulers.front();
  }();
  return kName;
}

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
