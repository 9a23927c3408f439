#include "torchx/plugins/fractionals.h"

#include <fmt/format.h>

namespace torchx::plugins {

Result<std::vector<Fractional>> PowersOfTwoGpus(const specs::Resource& whole) {
  int gpu = whole.gpu;
  if (gpu <= 0 || (gpu & (gpu - 1)) != 0) {
    return InvalidArgumentError(fmt::format(
        "powers_of_two_gpus: resource.gpu must be a power of two greater than 0 (1, 2, 4, 8, ...), got {}", gpu));
  }
  std::vector<Fractional> out;
  double fraction = 1.0;
  for (int g = gpu; g >= 1; g /= 2, fraction /= 2) out.push_back({fraction, std::to_string(g)});
  return out;
}

Result<std::vector<Fractional>> HalveMemDownTo(const specs::Resource& whole, int min_gib) {
  if (whole.memMB <= 0 || whole.memMB % 1024 != 0) {
    return InvalidArgumentError(fmt::format(
        "halve_mem_down_to: resource.memMB must be a positive whole number of GiB (a multiple of 1024), got {}",
        whole.memMB));
  }
  int gib = whole.memMB / 1024;
  int odd = gib;
  while (odd % 2 == 0) odd /= 2;
  if (min_gib < odd || min_gib <= 0) {
    return InvalidArgumentError(fmt::format(
        "halve_mem_down_to: minGiB={} is below {}, the odd part of {} GiB: halving further would not give whole GiB",
        min_gib, odd, gib));
  }
  std::vector<Fractional> out;
  double fraction = 1.0;
  for (int g = gib; g >= min_gib; g /= 2, fraction /= 2) {
    out.push_back({fraction, std::to_string(g)});
    if (g % 2 != 0) break;
  }
  return out;
}

}  // namespace torchx::plugins
