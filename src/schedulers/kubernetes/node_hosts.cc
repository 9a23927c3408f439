#include "schedulers/kubernetes/node_hosts.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "schedulers/kubernetes/metrics_api.h"
#include "schedulers/kubernetes/volcano_job.h"

namespace torchx::schedulers::kubernetes {
namespace {

using Json = nlohmann::json;

const Json& At(const Json& o, const char* key) {
  static const Json kNull;
  return o.is_object() && o.contains(key) ? o[key] : kNull;
}

std::string Str(const Json& o, const char* key) {
  const Json& v = At(o, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

std::optional<double> QuantityAt(const Json& o, const char* key) {
  const Json& v = At(o, key);
  if (v.is_string()) return ParseQuantity(v.get<std::string>());
  if (v.is_number()) return v.get<double>();
  return std::nullopt;
}

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

Result<std::vector<HostInfo>> HostsFromNodes(std::string_view nodes_json, std::string_view node_metrics_json,
                                             std::string_view pods_json, const std::string& ns) {
  Json nodes = Json::parse(nodes_json, nullptr, /*allow_exceptions=*/false);
  if (!nodes.is_object() || !At(nodes, "items").is_array()) {
    return InvalidArgumentError("kubernetes: the node list is not a NodeList");
  }
  std::vector<HostInfo> hosts;
  for (const Json& node : nodes["items"]) {
    HostInfo h;
    h.name = Str(At(node, "metadata"), "name");
    if (h.name.empty()) continue;
    const Json& status = At(node, "status");
    for (const Json& a : At(status, "addresses").is_array() ? At(status, "addresses") : Json::array()) {
      if (Str(a, "type") == "InternalIP" && h.address.empty()) h.address = Str(a, "address");
    }
    h.state = "Unknown";
    for (const Json& c : At(status, "conditions").is_array() ? At(status, "conditions") : Json::array()) {
      if (Str(c, "type") == "Ready") {
        std::string s = Str(c, "status");
        h.state = s == "True" ? "Ready" : s == "False" ? "NotReady" : "Unknown";
      }
    }
    if (At(At(node, "spec"), "unschedulable").is_boolean() && At(At(node, "spec"), "unschedulable").get<bool>()) {
      h.state += ",SchedulingDisabled";
    }
    // What pods may be given (allocatable: capacity less what the system keeps), where it says.
    const Json& alloc = At(status, "allocatable").is_object() ? At(status, "allocatable") : At(status, "capacity");
    h.cpus = QuantityAt(alloc, "cpu").value_or(0);
    h.memory_mb = static_cast<int64_t>(QuantityAt(alloc, "memory").value_or(0) / kMiB);
    h.gpus = static_cast<int>(QuantityAt(alloc, "nvidia.com/gpu").value_or(0));
    const Json& labels = At(At(node, "metadata"), "labels");
    if (labels.is_object() && labels.contains("node-role.kubernetes.io/control-plane"))
      h.groups.push_back("control-plane");
    hosts.push_back(std::move(h));
  }
  if (!node_metrics_json.empty()) {
    Json metrics = Json::parse(node_metrics_json, nullptr, /*allow_exceptions=*/false);
    for (const Json& m : At(metrics, "items").is_array() ? At(metrics, "items") : Json::array()) {
      std::string name = Str(At(m, "metadata"), "name");
      auto host = std::find_if(hosts.begin(), hosts.end(), [&](const HostInfo& h) { return h.name == name; });
      if (host == hosts.end()) continue;
      const Json& usage = At(m, "usage");
      host->cpus_used = QuantityAt(usage, "cpu");
      if (auto mem = QuantityAt(usage, "memory")) host->memory_used_mb = static_cast<int64_t>(*mem / kMiB);
    }
  }
  Json pods = Json::parse(pods_json, nullptr, /*allow_exceptions=*/false);
  for (const Json& pod : At(pods, "items").is_array() ? At(pods, "items") : Json::array()) {
    if (Str(At(pod, "status"), "phase") != "Running") continue;
    std::string node = Str(At(pod, "spec"), "nodeName");
    auto host = std::find_if(hosts.begin(), hosts.end(), [&](const HostInfo& h) { return h.name == node; });
    if (host == hosts.end()) continue;
    const Json& labels = At(At(pod, "metadata"), "labels");
    std::string job = Str(labels, kLabelInstance);
    if (job.empty()) continue;
    std::string app_id = ns + ":" + job;
    auto app = std::find_if(host->apps.begin(), host->apps.end(), [&](const HostApp& a) { return a.app_id == app_id; });
    if (app == host->apps.end()) app = host->apps.insert(host->apps.end(), HostApp{app_id, "", {}});
    app->where.push_back(fmt::format("{}/{}", Str(labels, kLabelRoleName), Str(labels, kLabelReplicaId)));
  }
  return hosts;
}

}  // namespace torchx::schedulers::kubernetes
