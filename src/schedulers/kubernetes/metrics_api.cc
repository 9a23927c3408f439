#include "schedulers/kubernetes/metrics_api.h"

#include <time.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "schedulers/kubernetes/volcano_job.h"

namespace torchx::schedulers::kubernetes {
namespace {

using Json = nlohmann::json;

std::optional<double> Decimal(std::string_view text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, std::chars_format::fixed);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string LabelOf(const Json& pod, const char* key) {
  const Json& labels = pod.value("metadata", Json::object()).value("labels", Json::object());
  if (!labels.is_object()) return {};
  auto it = labels.find(key);
  return it != labels.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::optional<double> ParseQuantity(std::string_view text) {
  struct Suffix {
    std::string_view name;
    double scale;
  };
  // Binary suffixes first: "Mi" must not be read as "M" after a number ending in "i".
  static constexpr Suffix kSuffixes[] = {{"Ki", 1024.0},
                                         {"Mi", 1048576.0},
                                         {"Gi", 1073741824.0},
                                         {"Ti", 1099511627776.0},
                                         {"Pi", 1125899906842624.0},
                                         {"Ei", 1152921504606846976.0},
                                         {"n", 1e-9},
                                         {"u", 1e-6},
                                         {"m", 1e-3},
                                         {"k", 1e3},
                                         {"M", 1e6},
                                         {"G", 1e9},
                                         {"T", 1e12},
                                         {"P", 1e15},
                                         {"E", 1e18}};
  for (const Suffix& s : kSuffixes) {
    if (text.size() > s.name.size() && text.substr(text.size() - s.name.size()) == s.name) {
      auto v = Decimal(text.substr(0, text.size() - s.name.size()));
      if (!v) return std::nullopt;
      return *v * s.scale;
    }
  }
  if (size_t e = text.find_first_of("eE"); e != std::string_view::npos) {  // "12e3": a decimal exponent
    auto mantissa = Decimal(text.substr(0, e));
    int exponent = 0;
    std::string_view rest = text.substr(e + 1);
    if (!rest.empty() && rest.front() == '+') rest.remove_prefix(1);
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), exponent);
    if (!mantissa || rest.empty() || ec != std::errc() || end != rest.data() + rest.size()) return std::nullopt;
    return *mantissa * std::pow(10.0, exponent);
  }
  return Decimal(text);
}

std::optional<double> Rfc3339Time(std::string_view text) {
  std::string s(text);
  int y = 0, mo = 0, d = 0, h = 0, mi = 0;
  double sec = 0;
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%lfZ%n", &y, &mo, &d, &h, &mi, &sec, &consumed) != 6 ||
      consumed == 0) {
    return std::nullopt;
  }
  struct tm t {};
  t.tm_year = y - 1900;
  t.tm_mon = mo - 1;
  t.tm_mday = d;
  t.tm_hour = h;
  t.tm_min = mi;
  return static_cast<double>(timegm(&t)) + sec;
}

Result<AppUsage> UsageFromPodMetrics(std::string_view pods_json, std::string_view metrics_json) {
  Json pods = Json::parse(pods_json, nullptr, false);
  Json metrics = Json::parse(metrics_json, nullptr, false);
  if (!pods.is_object() || !pods.contains("items") || !pods["items"].is_array()) {
    return InvalidArgumentError("kubernetes: the pod list is not a PodList");
  }
  if (!metrics.is_object() || !metrics.contains("items") || !metrics["items"].is_array()) {
    return InvalidArgumentError("kubernetes: the metrics API's answer is not a PodMetricsList");
  }
  struct Row {
    size_t role_order;
    ReplicaUsage usage;
  };
  std::vector<std::string> roles;
  std::vector<Row> rows;
  for (const Json& pod : pods["items"]) {
    if (!pod.is_object()) continue;
    std::string role = LabelOf(pod, kLabelRoleName);
    std::string replica = LabelOf(pod, kLabelReplicaId);
    std::string name = pod.value("metadata", Json::object()).value("name", "");
    int id = 0;
    if (role.empty() || std::from_chars(replica.data(), replica.data() + replica.size(), id).ec != std::errc()) {
      continue;  // not a replica TorchX made
    }
    auto at = std::find(roles.begin(), roles.end(), role);
    if (at == roles.end()) at = roles.insert(roles.end(), role);
    Row row{static_cast<size_t>(at - roles.begin()), ReplicaUsage{role, id, {}, {}}};
    const Json& spec = pod.value("spec", Json::object());
    std::string node = spec.is_object() ? spec.value("nodeName", "") : "";
    row.usage.host = node.empty() ? name : node;
    for (const Json& m : metrics["items"]) {
      if (!m.is_object() || m.value("metadata", Json::object()).value("name", "") != name) continue;
      UsageSample sample;
      if (auto t = Rfc3339Time(m.value("timestamp", ""))) sample.time = *t;
      std::optional<double> cores;
      std::optional<double> memory;
      const Json& containers = m.value("containers", Json::array());
      for (const Json& c : containers.is_array() ? containers : Json::array()) {
        const Json& usage = c.is_object() ? c.value("usage", Json::object()) : Json::object();
        if (!usage.is_object()) continue;
        if (auto v = usage.contains("cpu") && usage["cpu"].is_string() ? ParseQuantity(usage["cpu"].get<std::string>())
                                                                       : std::nullopt) {
          cores = cores.value_or(0) + *v;
        }
        if (auto v = usage.contains("memory") && usage["memory"].is_string()
                         ? ParseQuantity(usage["memory"].get<std::string>())
                         : std::nullopt) {
          memory = memory.value_or(0) + *v;
        }
      }
      if (cores) sample.cpu_percent = *cores * 100;
      if (memory) sample.rss_bytes = static_cast<int64_t>(std::llround(*memory));
      sample.processes = std::nullopt;
      row.usage.samples.push_back(std::move(sample));
      break;
    }
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::pair(a.role_order, a.usage.replica_id) < std::pair(b.role_order, b.usage.replica_id);
  });
  AppUsage out;
  for (Row& r : rows) out.replicas.push_back(std::move(r.usage));
  return out;
}

}  // namespace torchx::schedulers::kubernetes
