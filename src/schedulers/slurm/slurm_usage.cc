#include "schedulers/slurm/slurm_usage.h"

#include <algorithm>
#include <charconv>
#include <tuple>

#include <fmt/format.h>

namespace torchx::schedulers::slurm {
namespace {

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    start = nl == std::string_view::npos ? text.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

template <typename T>
std::optional<T> Number(std::string_view text) {
  T v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// "12345" bytes (--noconvert), or with a unit suffix where a version ignores --noconvert.
std::optional<int64_t> Bytes(std::string_view text) {
  int64_t scale = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K':
        scale = int64_t{1} << 10;
        break;
      case 'M':
        scale = int64_t{1} << 20;
        break;
      case 'G':
        scale = int64_t{1} << 30;
        break;
      case 'T':
        scale = int64_t{1} << 40;
        break;
      default:
        break;
    }
  }
  if (scale != 1) text.remove_suffix(1);
  auto v = Number<double>(text);
  if (!v || *v < 0) return std::nullopt;
  return static_cast<int64_t>(*v * static_cast<double>(scale));
}

}  // namespace

std::optional<double> SlurmDuration(std::string_view text) {
  double days = 0;
  if (size_t dash = text.find('-'); dash != std::string_view::npos) {
    auto d = Number<int>(text.substr(0, dash));
    if (!d || *d < 0) return std::nullopt;
    days = *d;
    text = text.substr(dash + 1);
  }
  std::vector<std::string_view> parts = Split(text, ':');
  if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
  double seconds = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    bool last = i + 1 == parts.size();
    auto v = last ? Number<double>(parts[i]) : std::optional<double>(Number<int>(parts[i]));
    if (!v || *v < 0) return std::nullopt;
    seconds = seconds * 60 + *v;
  }
  return days * 86400 + seconds;
}

Result<std::vector<StepUsage>> ParseSstat(std::string_view text) {
  std::vector<StepUsage> out;
  for (std::string_view line : Lines(text)) {
    std::vector<std::string_view> cols = Split(line, '|');
    if (cols.size() != 3) {
      return InvalidArgumentError(
          fmt::format("sstat: expected 3 '|'-separated fields ({}), got: {}", kSstatFields, line));
    }
    size_t dot = cols[0].find('.');
    if (dot == std::string_view::npos) return InvalidArgumentError(fmt::format("sstat: not a step id: {}", cols[0]));
    StepUsage s;
    s.job_id = std::string(cols[0].substr(0, dot));
    s.step = std::string(cols[0].substr(dot + 1));
    for (std::string_view tres : Split(cols[1], ',')) {
      size_t eq = tres.find('=');
      if (eq == std::string_view::npos) continue;
      std::string_view key = tres.substr(0, eq);
      std::string_view value = tres.substr(eq + 1);
      if (key == "cpu") s.cpu_seconds = SlurmDuration(value);
      if (key == "mem") s.memory_bytes = Bytes(value);
      if (key == "gres/gpuutil") s.gpu_utilization_percent = Number<double>(value);
      if (key == "gres/gpumem") s.gpu_memory_bytes = Bytes(value);
    }
    s.nodes = std::string(cols[2]);
    out.push_back(std::move(s));
  }
  return out;
}

std::map<std::string, double, std::less<>> ParseStepStarts(std::string_view text) {
  std::map<std::string, double, std::less<>> out;
  for (std::string_view line : Lines(text)) {
    std::vector<std::string_view> cols = Split(line, '|');
    if (cols.size() < 2) continue;
    if (auto t = SlurmTime(cols[1])) out.emplace(std::string(cols[0]), *t);
  }
  return out;
}

AppUsage UsageFromSteps(const std::vector<SlurmJob>& jobs, const std::vector<StepUsage>& steps,
                        const std::map<std::string, double, std::less<>>& starts, double now) {
  AppUsage usage;
  // Het component order is the AppDef's role and replica order (sbatch_script.cc).
  std::vector<const SlurmJob*> ordered;
  for (const SlurmJob& job : jobs) ordered.push_back(&job);
  std::stable_sort(ordered.begin(), ordered.end(), [](const SlurmJob* a, const SlurmJob* b) {
    return Number<int>(a->component).value_or(0) < Number<int>(b->component).value_or(0);
  });
  for (const SlurmJob* j : ordered) {
    const SlurmJob& job = *j;
    ReplicaUsage replica;
    std::tie(replica.role, replica.replica_id) = RoleAndReplica(job.name);
    replica.host = job.hostname;
    const std::string& id = job.raw_id.empty() ? job.job_id : job.raw_id;
    std::optional<double> cpu;
    std::optional<int64_t> memory;
    std::optional<double> first_start;
    std::optional<double> gpu_util;
    std::optional<int64_t> gpu_memory;
    int counted = 0;
    for (const StepUsage& s : steps) {
      if (s.job_id != id || !Number<int>(s.step)) continue;  // batch, extern: not the replica's command
      ++counted;
      if (s.cpu_seconds) cpu = cpu.value_or(0) + *s.cpu_seconds;
      if (s.memory_bytes) memory = memory.value_or(0) + *s.memory_bytes;
      if (s.gpu_utilization_percent) gpu_util = gpu_util.value_or(0) + *s.gpu_utilization_percent;
      if (s.gpu_memory_bytes) gpu_memory = gpu_memory.value_or(0) + *s.gpu_memory_bytes;
      if (replica.host.empty()) replica.host = s.nodes;
      if (auto it = starts.find(s.job_id + "." + s.step); it != starts.end()) {
        first_start = std::min(first_start.value_or(it->second), it->second);
      }
    }
    if (counted > 0) {
      UsageSample sample;
      sample.time = now;
      sample.rss_bytes = memory;
      // Within a second of the start there is no meaningful average (and slurmd has not gathered).
      if (cpu && first_start && now - *first_start >= 1) sample.cpu_percent = 100 * *cpu / (now - *first_start);
      if (gpu_util || gpu_memory) {
        GpuUsage gpu;
        gpu.name = "the step's GPUs (gres/gpuutil, gres/gpumem)";
        gpu.utilization_percent = gpu_util;
        gpu.memory_used_bytes = gpu_memory;
        sample.gpus.push_back(std::move(gpu));
      }
      replica.samples.push_back(std::move(sample));
    }
    usage.replicas.push_back(std::move(replica));
  }
  return usage;
}

}  // namespace torchx::schedulers::slurm
