// The -cfg grammar and casting: never crashes; a non-empty string that parses yields a pair.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "torchx/specs/runopts.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchx::specs;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto pairs = CfgStringToPairs(in);
  if (pairs && !in.empty() && pairs->empty()) std::abort();
  static const RunOpts opts = [] {
    RunOpts o;
    (void)o.Add("s", CfgType::kStr, "");
    (void)o.Add("i", CfgType::kInt, "");
    (void)o.Add("f", CfgType::kFloat, "");
    (void)o.Add("b", CfgType::kBool, "");
    (void)o.Add("l", CfgType::kListStr, "");
    (void)o.Add("d", CfgType::kDictStr, "");
    return o;
  }();
  auto cfg = opts.CfgFromString(in);
  if (cfg) {
    auto resolved = opts.Resolve(*cfg);
    if (!resolved) std::abort();  // every cast value has its option's type
    (void)CfgRepr(resolved->values());
    // Every declared option reads back as its declared type.
    (void)resolved->Str("s"), (void)resolved->Int("i"), (void)resolved->Float("f");
    (void)resolved->Bool("b"), (void)resolved->List("l"), (void)resolved->Dict("d");
  }
  return 0;
}
