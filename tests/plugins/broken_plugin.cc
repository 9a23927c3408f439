// Deliberately broken torchx plugins for the loader's negative tests, one per BROKEN_* define:
// NO_ENTRY (no entry symbol), BAD_ABI (abi_version 99), SMALL_INFO (struct_size too small),
// INIT_FAILS (init returns an error with a message), DUPLICATE (re-registers a builtin name).
#include <cstddef>

#include "torchx/plugins/plugin_abi.h"

namespace {

[[maybe_unused]] int Make(void*, double, TorchxResource* out) {
  out->cpu = 1;
  out->gpu = 0;
  out->mem_mb = 1024;
  return 0;
}

[[maybe_unused]] int Init(const TorchxPluginHost* host) {
#if defined(BROKEN_INIT_FAILS)
  host->set_error(host->ctx, "the license server is unreachable");
  return 3;
#elif defined(BROKEN_DUPLICATE)
  static const TorchxNamedResource dup = {
      sizeof(TorchxNamedResource), "gpu.small", &Make, nullptr, nullptr, nullptr, 0, TORCHX_FRACTIONALS_LIST, 0};
  return host->add_named_resource(host->ctx, &dup);
#else
  (void)host;
  return 0;
#endif
}

}  // namespace

#if !defined(BROKEN_NO_ENTRY)
extern "C" __attribute__((visibility("default"))) const TorchxPluginInfo* torchx_plugin_v1() {
#if defined(BROKEN_BAD_ABI)
  static const TorchxPluginInfo info = {sizeof(TorchxPluginInfo), 99u, "bad_abi", "0", &Init};
#elif defined(BROKEN_SMALL_INFO)
  static const TorchxPluginInfo info = {4, TORCHX_PLUGIN_ABI_VERSION, "small", "0", &Init};
#else
  static const TorchxPluginInfo info = {sizeof(TorchxPluginInfo), TORCHX_PLUGIN_ABI_VERSION, "broken", "0", &Init};
#endif
  return &info;
}
#else
extern "C" __attribute__((visibility("default"))) int not_a_torchx_plugin() { return 0; }
#endif
