#include "schedulers/ray/ray_nodes.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace torchx::schedulers::ray {
namespace {

using nlohmann::json;

double NumberAt(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_number() ? o[key].get<double>() : 0;
}

std::string StringAt(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
}

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

Result<std::vector<RayNode>> ParseRayNodes(std::string_view summary_json) {
  json doc = json::parse(summary_json, nullptr, /*allow_exceptions=*/false);
  const json* list = nullptr;
  if (!doc.is_discarded() && doc.is_object() && doc.contains("data") && doc["data"].is_object() &&
      doc["data"].contains("summary") && doc["data"]["summary"].is_array()) {
    list = &doc["data"]["summary"];
  }
  if (list == nullptr) return InvalidArgumentError("ray: the node summary has no `data.summary` list");
  std::vector<RayNode> nodes;
  std::map<std::string, int> per_machine;
  for (const json& n : *list) {
    if (!n.is_object()) continue;
    const json& raylet = n.contains("raylet") && n["raylet"].is_object() ? n["raylet"] : json::object();
    RayNode node;
    node.node_id = StringAt(raylet, "nodeId");
    if (node.node_id.empty()) continue;  // a node the head knows no raylet of yet
    HostInfo& h = node.host;
    h.name = StringAt(n, "hostname");
    h.address = StringAt(n, "ip");
    if (h.address.empty()) h.address = StringAt(raylet, "nodeManagerAddress");
    h.state = StringAt(raylet, "state");
    if (raylet.contains("isHeadNode") && raylet["isHeadNode"].is_boolean() && raylet["isHeadNode"].get<bool>()) {
      h.groups.push_back("head");
    }
    const json& total = raylet.contains("resourcesTotal") && raylet["resourcesTotal"].is_object()
                            ? raylet["resourcesTotal"]
                            : json::object();
    h.cpus = NumberAt(total, "CPU");
    h.gpus = static_cast<int>(NumberAt(total, "GPU"));
    // "cpu": the machine's busy percentage; "mem": [total, available, percent, used] in bytes.
    if (n.contains("cpu") && n["cpu"].is_number() && n.contains("cpus") && n["cpus"].is_array() && !n["cpus"].empty() &&
        n["cpus"][0].is_number()) {
      h.cpus_used = n["cpu"].get<double>() / 100.0 * n["cpus"][0].get<double>();
    }
    if (n.contains("mem") && n["mem"].is_array() && n["mem"].size() >= 4 && n["mem"][0].is_number() &&
        n["mem"][3].is_number()) {
      h.memory_mb = static_cast<int64_t>(n["mem"][0].get<double>() / kMiB);
      h.memory_used_mb = static_cast<int64_t>(n["mem"][3].get<double>() / kMiB);
    }
    ++per_machine[h.name];
    nodes.push_back(std::move(node));
  }
  for (RayNode& n : nodes) {
    if (n.host.name.empty() || per_machine[n.host.name] > 1) {
      n.host.name = fmt::format("{}{}{}", n.host.name, n.host.name.empty() ? "" : "/", n.node_id.substr(0, 8));
    }
  }
  return nodes;
}

void PlaceGang(const std::string& app_id, const GangStatus& gang, std::vector<RayNode>& nodes) {
  for (const ReplicaPlace& p : gang.replicas) {
    if (p.exit_code) continue;  // ended: no longer there
    auto node = std::find_if(nodes.begin(), nodes.end(), [&](const RayNode& n) { return n.node_id == p.node_id; });
    if (node == nodes.end()) continue;
    auto& apps = node->host.apps;
    auto app = std::find_if(apps.begin(), apps.end(), [&](const HostApp& a) { return a.app_id == app_id; });
    if (app == apps.end()) app = apps.insert(apps.end(), HostApp{app_id, "", {}});
    app->where.push_back(fmt::format("{}/{}", p.role, p.replica));
  }
}

}  // namespace torchx::schedulers::ray
