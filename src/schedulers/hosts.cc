#include "torchx/schedulers/hosts.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace torchx::schedulers {
namespace {

using nlohmann::json;

std::string Number(double v) {
  return std::fabs(v - std::round(v)) < 1e-9 ? fmt::format("{}", static_cast<long long>(std::round(v)))
                                             : fmt::format("{:.1f}", v);
}

// "3/8 CPUs" (allocated), "1.5 used/8" where only a reading is known, "8" with neither.
std::string Share(std::optional<double> allocated, std::optional<double> used, double capacity) {
  if (allocated) return fmt::format("{}/{}", Number(*allocated), Number(capacity));
  if (used) return fmt::format("{} used/{}", Number(*used), Number(capacity));
  return Number(capacity);
}

// In GiB from 10 GiB of capacity on, else MiB; a share in its capacity's unit ("1.6/23.5G").
std::string Memory(int64_t mb, bool gib) {
  return gib ? Number(std::round(static_cast<double>(mb) / 102.4) / 10) : std::to_string(mb);
}

std::string MemoryShare(const HostInfo& h) {
  bool gib = h.memory_mb >= 10240;
  std::string unit = gib ? "G" : "M";
  if (h.memory_allocated_mb) {
    return fmt::format("{}/{}{}", Memory(*h.memory_allocated_mb, gib), Memory(h.memory_mb, gib), unit);
  }
  if (h.memory_used_mb)
    return fmt::format("{} used/{}{}", Memory(*h.memory_used_mb, gib), Memory(h.memory_mb, gib), unit);
  return Memory(h.memory_mb, gib) + unit;
}

template <typename T>
json Optional(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

}  // namespace

std::string FormatHosts(const std::string& scheduler, const std::vector<HostInfo>& hosts) {
  if (hosts.empty()) return fmt::format("{}: no host\n", scheduler);
  std::vector<std::vector<std::string>> rows = {{"HOST", "STATE", "CPUS", "MEMORY", "GPUS", "APPS"}};
  for (const HostInfo& h : hosts) {
    std::string gpus = h.gpus_allocated ? fmt::format("{}/{}", *h.gpus_allocated, h.gpus) : std::to_string(h.gpus);
    rows.push_back({h.name, h.state, Share(h.cpus_allocated, h.cpus_used, h.cpus), MemoryShare(h), gpus,
                    std::to_string(h.apps.size())});
  }
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (size_t k = 0; k < rows.size(); ++k) {
    std::string line;
    for (size_t i = 0; i < rows[k].size(); ++i) line += fmt::format("{:<{}}  ", rows[k][i], width[i]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
    if (k == 0) continue;
    for (const HostApp& a : hosts[k - 1].apps) {
      out += fmt::format("    {}", a.handle.empty() ? a.app_id : a.handle);
      if (!a.where.empty()) out += fmt::format(" ({})", fmt::join(a.where, ", "));
      out += "\n";
    }
  }
  return out;
}

std::string HostsToJson(const std::string& scheduler, const std::vector<HostInfo>& hosts) {
  json list = json::array();
  for (const HostInfo& h : hosts) {
    json apps = json::array();
    for (const HostApp& a : h.apps) apps.push_back({{"app_id", a.app_id}, {"handle", a.handle}, {"where", a.where}});
    list.push_back({{"name", h.name},
                    {"address", h.address},
                    {"state", h.state},
                    {"groups", h.groups},
                    {"cpus", h.cpus},
                    {"cpus_allocated", Optional(h.cpus_allocated)},
                    {"cpus_used", Optional(h.cpus_used)},
                    {"memory_mb", h.memory_mb},
                    {"memory_allocated_mb", Optional(h.memory_allocated_mb)},
                    {"memory_used_mb", Optional(h.memory_used_mb)},
                    {"gpus", h.gpus},
                    {"gpus_allocated", Optional(h.gpus_allocated)},
                    {"apps", std::move(apps)}});
  }
  return json{{"scheduler", scheduler}, {"hosts", std::move(list)}}.dump(-1, ' ', false,
                                                                         json::error_handler_t::replace);
}

}  // namespace torchx::schedulers
