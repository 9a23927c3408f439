// Fractional named resources: the slices of a whole host a named resource registers as
// `<name>_<suffix>` (TorchX's register.powers_of_two_gpus / register.halve_mem_down_to).
//
// The one place that names and expands them: native plugins (native_loader.cc) and Python
// plugins (torchx.plugins, through the extension) both hand over a request and get the names.
#pragma once

#include <functional>
#include <string>
#include <string_view>
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

/// What fractional variants a named resource asks for: none, an explicit list, or a rule the
/// host computes from the whole resource.
struct FractionalsRequest {
  enum class Policy { kNone, kList, kPowersOfTwoGpus, kHalveMemDownTo };
  Policy policy = Policy::kNone;
  std::vector<Fractional> list;  ///< kList
  int min_gib = 0;               ///< kHalveMemDownTo
};

/// {"policy": "none" | "list" | "powers_of_two_gpus" | "halve_mem_down_to",
///  "list": [{"fraction": 0.5, "suffix": "half"}] (list), "min_gib": 16 (halve_mem_down_to)}.
/// kInvalidArgument naming the field and, for the policy, the valid choices.
Result<FractionalsRequest> FractionalsRequestFromJson(std::string_view json);

/// The request's fractionals; `whole` (the resource at fraction 1.0) is made only for a rule.
Result<std::vector<Fractional>> ComputeFractionals(const FractionalsRequest& request,
                                                   const std::function<Result<specs::Resource>()>& whole);

/// A name a named resource registers, and the fraction its factory is called with.
struct NamedFraction {
  std::string name;
  double fraction = 1.0;
  friend bool operator==(const NamedFraction&, const NamedFraction&) = default;
};

struct NamedResourceVariants {
  /// `name` and each alias at 1.0, then `<name>_<suffix>` per fractional.
  std::vector<NamedFraction> names;
  /// Why the fractionals could not be computed ("named resource <name>: ..."); the name and
  /// aliases are still in `names`, so a plugin with a bad rule keeps its whole resource.
  Status fractionals_error;
};

NamedResourceVariants ExpandNamedResource(const std::string& name, const std::vector<std::string>& aliases,
                                          const FractionalsRequest& request,
                                          const std::function<Result<specs::Resource>()>& whole);

}  // namespace torchx::plugins
