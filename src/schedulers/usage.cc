#include "torchx/schedulers/usage.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace torchx::schedulers {
namespace {

using nlohmann::json;

template <typename T>
json OrNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json GpuJson(const GpuUsage& g) {
  return {{"index", g.index},
          {"name", g.name},
          {"utilization_percent", OrNull(g.utilization_percent)},
          {"memory_used_bytes", OrNull(g.memory_used_bytes)},
          {"memory_total_bytes", OrNull(g.memory_total_bytes)}};
}

json SampleJson(const UsageSample& s) {
  json gpus = json::array();
  for (const GpuUsage& g : s.gpus) gpus.push_back(GpuJson(g));
  return {{"time", s.time},
          {"cpu_percent", OrNull(s.cpu_percent)},
          {"rss_bytes", OrNull(s.rss_bytes)},
          {"processes", OrNull(s.processes)},
          {"gpus", std::move(gpus)}};
}

json SamplesJson(const std::vector<UsageSample>& samples) {
  json out = json::array();
  for (const UsageSample& s : samples) out.push_back(SampleJson(s));
  return out;
}

// Reading: every field optional but typed; a wrong type names the field.
class Reader {
 public:
  Status error = OkStatus();

  const json* Member(const json& obj, const char* key, const std::string& where) {
    if (!obj.is_object()) {
      Fail(where, "an object");
      return nullptr;
    }
    auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }
  template <typename T>
  std::optional<T> Number(const json& obj, const char* key, const std::string& where) {
    const json* v = Member(obj, key, where);
    if (!v) return std::nullopt;
    if (!v->is_number()) {
      Fail(where + "." + key, "a number");
      return std::nullopt;
    }
    return v->get<T>();
  }
  std::string Str(const json& obj, const char* key, const std::string& where) {
    const json* v = Member(obj, key, where);
    if (!v) return "";
    if (!v->is_string()) {
      Fail(where + "." + key, "a string");
      return "";
    }
    return v->get<std::string>();
  }
  const json* Array(const json& obj, const char* key, const std::string& where) {
    const json* v = Member(obj, key, where);
    if (v && !v->is_array()) {
      Fail(where + "." + key, "a list");
      return nullptr;
    }
    return v;
  }
  UsageSample Sample(const json& j, const std::string& where) {
    UsageSample s;
    s.time = Number<double>(j, "time", where).value_or(0);
    s.cpu_percent = Number<double>(j, "cpu_percent", where);
    s.rss_bytes = Number<int64_t>(j, "rss_bytes", where);
    s.processes = Number<int>(j, "processes", where);
    if (const json* gpus = Array(j, "gpus", where)) {
      for (size_t i = 0; i < gpus->size(); ++i) {
        std::string at = fmt::format("{}.gpus[{}]", where, i);
        const json& g = (*gpus)[i];
        GpuUsage u;
        u.index = Number<int>(g, "index", at).value_or(0);
        u.name = Str(g, "name", at);
        u.utilization_percent = Number<double>(g, "utilization_percent", at);
        u.memory_used_bytes = Number<int64_t>(g, "memory_used_bytes", at);
        u.memory_total_bytes = Number<int64_t>(g, "memory_total_bytes", at);
        s.gpus.push_back(std::move(u));
      }
    }
    return s;
  }
  std::vector<UsageSample> Samples(const json& obj, const std::string& where) {
    std::vector<UsageSample> out;
    if (const json* arr = Array(obj, "samples", where)) {
      for (size_t i = 0; i < arr->size(); ++i)
        out.push_back(Sample((*arr)[i], fmt::format("{}.samples[{}]", where, i)));
    }
    return out;
  }

 private:
  void Fail(const std::string& field, const char* want) {
    if (error.ok()) error = InvalidArgumentError(fmt::format("resource usage: `{}` must be {}", field, want));
  }
};

}  // namespace

std::string UsageToJson(const AppUsage& usage) {
  json replicas = json::array();
  for (const ReplicaUsage& r : usage.replicas) {
    replicas.push_back(
        {{"role", r.role}, {"replica_id", r.replica_id}, {"host", r.host}, {"samples", SamplesJson(r.samples)}});
  }
  json hosts = json::array();
  for (const HostUsage& h : usage.hosts) hosts.push_back({{"host", h.host}, {"samples", SamplesJson(h.samples)}});
  json j = {{"interval_seconds", usage.interval_seconds},
            {"gpu_note", usage.gpu_note},
            {"note", usage.note},
            {"replicas", std::move(replicas)},
            {"hosts", std::move(hosts)}};
  return j.dump();
}

Result<AppUsage> UsageFromJson(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgumentError("resource usage: not a JSON object");
  Reader r;
  AppUsage u;
  u.interval_seconds = r.Number<double>(j, "interval_seconds", "usage").value_or(0);
  u.gpu_note = r.Str(j, "gpu_note", "usage");
  u.note = r.Str(j, "note", "usage");
  if (const json* reps = r.Array(j, "replicas", "usage")) {
    for (size_t i = 0; i < reps->size(); ++i) {
      std::string at = fmt::format("replicas[{}]", i);
      ReplicaUsage ru;
      ru.role = r.Str((*reps)[i], "role", at);
      ru.replica_id = r.Number<int>((*reps)[i], "replica_id", at).value_or(0);
      ru.host = r.Str((*reps)[i], "host", at);
      ru.samples = r.Samples((*reps)[i], at);
      u.replicas.push_back(std::move(ru));
    }
  }
  if (const json* hosts = r.Array(j, "hosts", "usage")) {
    for (size_t i = 0; i < hosts->size(); ++i) {
      std::string at = fmt::format("hosts[{}]", i);
      HostUsage hu;
      hu.host = r.Str((*hosts)[i], "host", at);
      hu.samples = r.Samples((*hosts)[i], at);
      u.hosts.push_back(std::move(hu));
    }
  }
  if (!r.error.ok()) return r.error;
  return u;
}

std::string FormatBytes(int64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (std::fabs(v) >= 1024 && u + 1 < std::size(kUnits)) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{}B", bytes) : fmt::format("{:.1f}{}", v, kUnits[u]);
}

namespace {

std::string Pct(const std::optional<double>& v) { return v ? fmt::format("{:.1f}", *v) : "-"; }

std::string GpuMemory(const GpuUsage& g) {
  if (!g.memory_used_bytes) return "-";
  if (!g.memory_total_bytes) return FormatBytes(*g.memory_used_bytes);
  return FormatBytes(*g.memory_used_bytes) + "/" + FormatBytes(*g.memory_total_bytes);
}

// Eight levels, as `spark` draws them; 100% per core is the top of the scale of one core, more
// cores scale to the series' own peak.
std::string Spark(const std::vector<UsageSample>& samples, int history) {
  static const char* const kBars[] = {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
  size_t n = std::min(samples.size(), static_cast<size_t>(history));
  double top = 100;
  for (size_t i = samples.size() - n; i < samples.size(); ++i) top = std::max(top, samples[i].cpu_percent.value_or(0));
  std::string out;
  for (size_t i = samples.size() - n; i < samples.size(); ++i) {
    if (!samples[i].cpu_percent) {
      out += " ";
      continue;
    }
    auto level = static_cast<size_t>(std::lround(*samples[i].cpu_percent / top * 7));
    out += kBars[std::min<size_t>(level, 7)];
  }
  return out;
}

std::string Age(double seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds < 120) return fmt::format("{:.0f}s ago", seconds);
  if (seconds < 7200) return fmt::format("{:.0f}m ago", seconds / 60);
  return fmt::format("{:.1f}h ago", seconds / 3600);
}

}  // namespace

std::string FormatUsage(const AppUsage& usage, double now, int history) {
  std::vector<std::vector<std::string>> rows;
  // Over the kept series too, where there is one: what the job used over its life, not only at
  // its last sample (which, for an ended job, is its teardown).
  bool series = false;
  for (const ReplicaUsage& r : usage.replicas) series |= r.samples.size() > 1;
  std::vector<std::string> header = {"REPLICA", "HOST", "CPU%", "RSS", "PROCS", "GPU", "GPU%", "GPU MEM"};
  if (series) {
    header.insert(header.begin() + 5, "AVG CPU%");
    header.insert(header.begin() + 6, "PEAK RSS");
  }
  if (history > 0) header.push_back("CPU HISTORY");
  rows.push_back(header);
  auto summary = [](const std::vector<UsageSample>& samples) {
    double cpu = 0;
    int n = 0;
    int64_t peak = -1;
    for (const UsageSample& s : samples) {
      if (s.cpu_percent) cpu += *s.cpu_percent, ++n;
      if (s.rss_bytes) peak = std::max(peak, *s.rss_bytes);
    }
    return std::pair<std::string, std::string>(n ? fmt::format("{:.1f}", cpu / n) : "-",
                                               peak >= 0 ? FormatBytes(peak) : "-");
  };
  double newest = 0;
  for (const ReplicaUsage& r : usage.replicas) {
    std::string name = fmt::format("{}/{}", r.role, r.replica_id);
    if (r.samples.empty()) {
      std::vector<std::string> row = {name, r.host, "-", "-", "-", "-", "-", "-"};
      if (series) row.insert(row.begin() + 5, {"-", "-"});
      if (history > 0) row.push_back("");
      rows.push_back(std::move(row));
      continue;
    }
    const UsageSample& s = r.samples.back();
    newest = std::max(newest, s.time);
    std::vector<std::string> row = {name,
                                    r.host,
                                    Pct(s.cpu_percent),
                                    s.rss_bytes ? FormatBytes(*s.rss_bytes) : "-",
                                    s.processes ? std::to_string(*s.processes) : "-",
                                    s.gpus.empty() ? "-" : std::to_string(s.gpus[0].index),
                                    s.gpus.empty() ? "-" : Pct(s.gpus[0].utilization_percent),
                                    s.gpus.empty() ? "-" : GpuMemory(s.gpus[0])};
    if (series) {
      auto [avg, peak] = summary(r.samples);
      row.insert(row.begin() + 5, {avg, peak});
    }
    if (history > 0) row.push_back(Spark(r.samples, history));
    rows.push_back(std::move(row));
    for (size_t g = 1; g < s.gpus.size(); ++g) {  // a replica on several GPUs: a row for each
      std::vector<std::string> more = {"",
                                       "",
                                       "",
                                       "",
                                       "",
                                       std::to_string(s.gpus[g].index),
                                       Pct(s.gpus[g].utilization_percent),
                                       GpuMemory(s.gpus[g])};
      if (series) more.insert(more.begin() + 5, {"", ""});
      if (history > 0) more.push_back("");
      rows.push_back(std::move(more));
    }
  }
  // Several replicas (a job's, a sweep's running trials'): their newest figures summed.
  std::optional<double> cpu_total;
  std::optional<int64_t> rss_total;
  std::optional<int> procs_total;
  int sampled = 0;
  for (const ReplicaUsage& r : usage.replicas) {
    if (r.samples.empty()) continue;
    ++sampled;
    const UsageSample& s = r.samples.back();
    if (s.cpu_percent) cpu_total = cpu_total.value_or(0) + *s.cpu_percent;
    if (s.rss_bytes) rss_total = rss_total.value_or(0) + *s.rss_bytes;
    if (s.processes) procs_total = procs_total.value_or(0) + *s.processes;
  }
  if (sampled > 1) {
    std::vector<std::string> row = {fmt::format("TOTAL ({} replicas)", sampled),
                                    "",
                                    Pct(cpu_total),
                                    rss_total ? FormatBytes(*rss_total) : "-",
                                    procs_total ? std::to_string(*procs_total) : "-",
                                    "",
                                    "",
                                    ""};
    if (series) row.insert(row.begin() + 5, {"", ""});
    if (history > 0) row.push_back("");
    rows.push_back(std::move(row));
  }
  for (const HostUsage& h : usage.hosts) {
    if (!h.samples.empty()) newest = std::max(newest, h.samples.back().time);
  }
  std::string out;
  if (usage.interval_seconds > 0) {
    out += fmt::format("Resources (sampled every {:g}s", usage.interval_seconds);
    out += newest > 0 ? fmt::format("; newest sample {}):\n", Age(now - newest)) : "):\n";
  } else {
    out += "Resources:\n";
  }
  std::vector<size_t> width(rows[0].size(), 0);
  auto display_width = [](const std::string& s) {  // UTF-8: count code points
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));
  }
  auto emit = [&](const std::vector<std::vector<std::string>>& table) {
    for (const auto& row : table) {
      std::string line = "  ";
      for (size_t c = 0; c < row.size(); ++c) {
        line += row[c];
        if (c + 1 < row.size()) line += std::string(width[c] - display_width(row[c]) + 2, ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  };
  emit(rows);
  for (const HostUsage& h : usage.hosts) {
    if (h.samples.empty() || h.samples.back().gpus.empty()) continue;
    std::vector<std::vector<std::string>> gpus = {{"GPU", "NAME", "UTIL%", "MEMORY"}};
    for (const GpuUsage& g : h.samples.back().gpus) {
      gpus.push_back({std::to_string(g.index), g.name, Pct(g.utilization_percent), GpuMemory(g)});
    }
    width.assign(4, 0);
    for (const auto& row : gpus) {
      for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));
    }
    out += fmt::format("GPUs on {}:\n", h.host.empty() ? "the host" : h.host);
    emit(gpus);
  }
  if (!usage.gpu_note.empty()) out += "GPUs: " + usage.gpu_note + "\n";
  if (!usage.note.empty()) out += "Note: " + usage.note + "\n";
  return out;
}

std::string SampleToJson(const UsageSample& sample) { return SampleJson(sample).dump(); }

Result<UsageSample> SampleFromJson(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgumentError("resource usage: a sample is not a JSON object");
  Reader r;
  UsageSample s = r.Sample(j, "sample");
  if (!r.error.ok()) return r.error;
  return s;
}

}  // namespace torchx::schedulers
