#include "torchx/plugins/fractionals.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

namespace {

using Json = nlohmann::json;

constexpr std::string_view kPolicies = "[none, list, powers_of_two_gpus, halve_mem_down_to]";

Status FieldError(std::string_view field, std::string_view expected, const Json& got) {
  return InvalidArgumentError(fmt::format("fractionals.{}: expected {}, got {}", field, expected, got.dump()));
}

}  // namespace

Result<FractionalsRequest> FractionalsRequestFromJson(std::string_view json) {
  Json j = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError(fmt::format("fractionals: expected a JSON object, got {}", json));
  }
  const Json policy = j.value("policy", Json("none"));
  if (!policy.is_string()) return FieldError("policy", fmt::format("one of {}", kPolicies), policy);
  FractionalsRequest req;
  const std::string name = policy.get<std::string>();
  if (name == "none") {
    req.policy = FractionalsRequest::Policy::kNone;
  } else if (name == "powers_of_two_gpus") {
    req.policy = FractionalsRequest::Policy::kPowersOfTwoGpus;
  } else if (name == "halve_mem_down_to") {
    req.policy = FractionalsRequest::Policy::kHalveMemDownTo;
    const Json min = j.value("min_gib", Json());
    if (!min.is_number_integer()) return FieldError("min_gib", "an integer (GiB)", min);
    req.min_gib = min.get<int>();
  } else if (name == "list") {
    req.policy = FractionalsRequest::Policy::kList;
    const Json list = j.value("list", Json::array());
    if (!list.is_array()) return FieldError("list", "a list of {fraction, suffix}", list);
    for (size_t i = 0; i < list.size(); ++i) {
      const Json& f = list[i];
      std::string path = fmt::format("list[{}]", i);
      if (!f.is_object() || !f.contains("fraction") || !f["fraction"].is_number() || !f.contains("suffix") ||
          !f["suffix"].is_string()) {
        return FieldError(path, "{\"fraction\": number, \"suffix\": string}", f);
      }
      req.list.push_back({f["fraction"].get<double>(), f["suffix"].get<std::string>()});
    }
  } else {
    return InvalidArgumentError(
        fmt::format("fractionals.policy: unknown policy '{}', must be one of {}", name, kPolicies));
  }
  return req;
}

Result<std::vector<Fractional>> ComputeFractionals(const FractionalsRequest& request,
                                                   const std::function<Result<specs::Resource>()>& whole) {
  using Policy = FractionalsRequest::Policy;
  switch (request.policy) {
    case Policy::kNone:
      return std::vector<Fractional>{};
    case Policy::kList:
      return request.list;
    case Policy::kPowersOfTwoGpus:
    case Policy::kHalveMemDownTo:
      break;
  }
  TORCHX_ASSIGN_OR_RETURN(specs::Resource r, whole());
  return request.policy == Policy::kPowersOfTwoGpus ? PowersOfTwoGpus(r) : HalveMemDownTo(r, request.min_gib);
}

NamedResourceVariants ExpandNamedResource(const std::string& name, const std::vector<std::string>& aliases,
                                          const FractionalsRequest& request,
                                          const std::function<Result<specs::Resource>()>& whole) {
  NamedResourceVariants out;
  out.names.push_back({name, 1.0});
  for (const std::string& a : aliases) out.names.push_back({a, 1.0});
  auto fractionals = ComputeFractionals(request, whole);
  if (!fractionals) {
    out.fractionals_error = fractionals.error().WithContext(fmt::format("named resource {}", name));
    return out;
  }
  for (const Fractional& f : *fractionals) out.names.push_back({fmt::format("{}_{}", name, f.suffix), f.fraction});
  return out;
}

}  // namespace torchx::plugins
