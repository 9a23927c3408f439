// `.torchxconfig` INI: never crashes; every parsed entry has a section and a key.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "torchx/config/torchx_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchx;
  auto cfg = config::TorchxConfig::Parse(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  if (!cfg) return 0;
  specs::RunOpts opts;
  (void)opts.Add("b", specs::CfgType::kBool, "");
  (void)opts.Add("l", specs::CfgType::kListStr, "");
  (void)opts.Add("d", specs::CfgType::kDictStr, "");
  (void)opts.Add("i", specs::CfgType::kInt, "");
  for (const std::string& section : cfg->SectionNames()) {
    if (section.empty()) std::abort();
    specs::Cfg out;
    (void)cfg->ApplySchedulerDefaults(section, opts, out);
  }
  return 0;
}
