// Fractional named resources: the slices of a whole host a named resource registers as
// `<name>_<suffix>` (TorchX's register.powers_of_two_gpus / register.halve_mem_down_to).
#pragma once

#include <string>
#include <vector>

#include "torchx/specs/app_def.h"
#include "torchx/status.h"

namespace torchx::plugins {

struct Fractional {
  double fraction = 1.0;  ///< 1.0 = the whole resource
  std::string suffix;     ///< registered as <name>_<suffix>
  friend bool operator==(const Fractional&, const Fractional&) = default;
};

/// One entry per power of two from the resource's GPU count down to 1: 8 GPUs ->
/// {1.0 "8", 0.5 "4", 0.25 "2", 0.125 "1"}. kInvalidArgument when gpu is 0 or not a power of two.
Result<std::vector<Fractional>> PowersOfTwoGpus(const specs::Resource& whole);

/// Memory halvings in GiB from the whole down to `min_gib`: 64 GiB, min 8 -> {1.0 "64", 0.5 "32",
/// 0.25 "16", 0.125 "8"}. kInvalidArgument when memMB is 0 or not whole GiB, or when min_gib is
/// below the odd part of the GiB count (halving further would not give whole GiB).
Result<std::vector<Fractional>> HalveMemDownTo(const specs::Resource& whole, int min_gib);

}  // namespace torchx::plugins
