// Property: any handle that parses re-formats to a handle that parses to the same parts.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "torchx/specs/app_handle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto parsed = torchx::specs::ParseAppHandle(in);
  if (!parsed) return 0;
  auto again = torchx::specs::ParseAppHandle(
      torchx::specs::MakeAppHandle(parsed->scheduler_backend, parsed->session_name, parsed->app_id));
  if (!again || !(*again == *parsed)) std::abort();
  return 0;
}
