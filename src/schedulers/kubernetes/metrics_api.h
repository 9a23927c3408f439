// Reading what the API server says about use (metrics.k8s.io, served by metrics-server): its
// quantities ("250m", "64Mi"), its RFC 3339 times, and a PodMetricsList joined to an app's pods
// (the replica each pod is, from its labels). Pure: the scheduler makes the calls.
#pragma once

#include <optional>
#include <string_view>

#include "torchx/schedulers/usage.h"
#include "torchx/status.h"

namespace torchx::schedulers::kubernetes {

/// The path of the metrics API's pod list in a namespace (format with the namespace).
inline constexpr const char* kPodMetricsApi = "/apis/metrics.k8s.io/v1beta1/namespaces/{}/pods";

/// A Kubernetes quantity in its base unit: "250m" -> 0.25, "1.5" -> 1.5, "64Mi" -> 67108864,
/// "5G" -> 5e9, "12e3" -> 12000, "100n" -> 1e-7. nullopt for anything else.
std::optional<double> ParseQuantity(std::string_view text);

/// "2026-11-26T13:55:38Z" or with fractional seconds, as epoch seconds; nullopt otherwise.
std::optional<double> Rfc3339Time(std::string_view text);

/// The app's replicas from `pods_json` (a PodList: each pod's role and replica from TorchX's
/// labels, its node from spec.nodeName, else the pod's name) with one sample each from
/// `metrics_json` (a PodMetricsList): CPU % is the containers' cores over the metrics window x 100,
/// memory their working set (what metrics-server reports, close to RSS). A pod the metrics do
/// not list (not running, or not scraped yet) has no sample. kInvalidArgument naming the part
/// that is not JSON of the expected shape.
Result<AppUsage> UsageFromPodMetrics(std::string_view pods_json, std::string_view metrics_json);

}  // namespace torchx::schedulers::kubernetes
