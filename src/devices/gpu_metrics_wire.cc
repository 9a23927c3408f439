// The JSON of one GPU reading (see gpu_metrics_wire.h).
#include "devices/gpu_metrics_wire.h"

#include <optional>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace torchx::devices::internal {
namespace {

using Json = nlohmann::json;

template <typename T>
void PutIfSet(Json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

template <typename T>
void GetIfThere(const Json& j, const char* key, std::optional<T>& v) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) v = it->get<T>();
}

}  // namespace

std::string GpuReadingToLine(const Result<std::vector<GpuDeviceSample>>& reading) {
  // Invalid UTF-8 (a device's name, a library path in a message) is replaced, not thrown on.
  constexpr auto kReplace = Json::error_handler_t::replace;
  if (!reading) return Json{{"ok", false}, {"message", reading.error().message()}}.dump(-1, ' ', false, kReplace);
  Json devices = Json::array();
  for (const GpuDeviceSample& d : *reading) {
    Json dev = {{"index", d.index}, {"name", d.name}};
    PutIfSet(dev, "utilization_percent", d.utilization_percent);
    PutIfSet(dev, "memory_used_bytes", d.memory_used_bytes);
    PutIfSet(dev, "memory_total_bytes", d.memory_total_bytes);
    Json procs = Json::array();
    for (const GpuProcess& p : d.processes) {
      Json proc = {{"pid", p.pid}};
      PutIfSet(proc, "memory_used_bytes", p.memory_used_bytes);
      PutIfSet(proc, "utilization_percent", p.utilization_percent);
      procs.push_back(std::move(proc));
    }
    dev["processes"] = std::move(procs);
    devices.push_back(std::move(dev));
  }
  return Json{{"ok", true}, {"devices", std::move(devices)}}.dump(-1, ' ', false, kReplace);
}

Result<std::vector<GpuDeviceSample>> GpuReadingFromLine(std::string_view line) {
  Json j = Json::parse(line, nullptr, false);
  if (!j.is_object() || !j.contains("ok") || !j["ok"].is_boolean()) {
    return InternalError(fmt::format("torchx-gpu-metrics wrote an unreadable line: {}", line.substr(0, 200)));
  }
  try {
    if (!j["ok"].get<bool>()) return UnavailableError(j.value("message", std::string("GPU metrics unavailable")));
    std::vector<GpuDeviceSample> out;
    for (const Json& dev : j.at("devices")) {
      GpuDeviceSample d;
      d.index = dev.at("index").get<int>();
      d.name = dev.value("name", std::string());
      GetIfThere(dev, "utilization_percent", d.utilization_percent);
      GetIfThere(dev, "memory_used_bytes", d.memory_used_bytes);
      GetIfThere(dev, "memory_total_bytes", d.memory_total_bytes);
      for (const Json& proc : dev.value("processes", Json::array())) {
        GpuProcess p;
        p.pid = proc.at("pid").get<int>();
        GetIfThere(proc, "memory_used_bytes", p.memory_used_bytes);
        GetIfThere(proc, "utilization_percent", p.utilization_percent);
        d.processes.push_back(p);
      }
      out.push_back(std::move(d));
    }
    return out;
  } catch (const Json::exception& e) {
    return InternalError(fmt::format("torchx-gpu-metrics wrote an unreadable line: {}", e.what()));
  }
}

}  // namespace torchx::devices::internal
