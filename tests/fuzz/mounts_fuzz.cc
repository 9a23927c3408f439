// `--mounts` tokens: never crashes; every parsed mount has a source and destination.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "torchx/specs/app_def.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchx::specs;
  auto mounts = ParseMountsString(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!mounts) return 0;
  for (const Mount& m : *mounts) {
    if (const auto* b = std::get_if<BindMount>(&m); b && (b->src_path.empty() || b->dst_path.empty())) std::abort();
    if (const auto* d = std::get_if<DeviceMount>(&m); d && d->dst_path.empty()) std::abort();
  }
  return 0;
}
