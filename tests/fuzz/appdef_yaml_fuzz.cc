// Property: any AppDef YAML that parses round-trips through the YAML emitter to an equal AppDef.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "torchx/specs/serialize.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchx::specs;
  auto app = AppDefFromYaml(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!app) return 0;
  auto back = AppDefFromYaml(AppDefToYaml(*app));
  if (!back || AppDefToJson(*back) != AppDefToJson(*app)) std::abort();
  return 0;
}
