// Property: any AppDef JSON that parses round-trips through the canonical form exactly.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "torchx/specs/serialize.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchx::specs;
  auto app = AppDefFromJson(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!app) return 0;
  (void)ValidateAppDef(*app);
  std::string canonical = AppDefToJson(*app);
  auto back = AppDefFromJson(canonical);
  if (!back || AppDefToJson(*back) != canonical) std::abort();
  return 0;
}
