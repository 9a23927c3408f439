// Resource use of an app's replicas (Capability::kResourceUsage): CPU, resident memory and GPU
// figures sampled over time, per replica and per host. Back-ends fill it from what their engine
// measures (local_cwd: its supervisor's samples of /proc and NVML; slurm: sstat; containers: the
// engine's stats); the CLI (`status --resources`, `top`), the dashboard and Python read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "torchx/status.h"

namespace torchx::schedulers {

/// One GPU in one sample. For a replica: the figures of its own processes on the device where
/// the engine can attribute them (memory by process; utilisation by process, else the device's).
/// For a host: the device's.
struct GpuUsage {
  int index = 0;     ///< the device's index on its host (NVML's order)
  std::string name;  ///< "NVIDIA H100 80GB HBM3"
  std::optional<double> utilization_percent;
  std::optional<int64_t> memory_used_bytes;
  std::optional<int64_t> memory_total_bytes;
};

struct UsageSample {
  double time = 0;                    ///< epoch seconds
  std::optional<double> cpu_percent;  ///< 100 = one core busy
  std::optional<int64_t> rss_bytes;   ///< resident memory of every process of the replica
  std::optional<int> processes;       ///< how many processes the figures cover
  std::vector<GpuUsage> gpus;
};

struct ReplicaUsage {
  std::string role;
  int replica_id = 0;
  std::string host;
  std::vector<UsageSample> samples;  ///< oldest first
};

struct HostUsage {
  std::string host;
  std::vector<UsageSample> samples;  ///< device-level GPU figures, oldest first
};

struct AppUsage {
  double interval_seconds = 0;  ///< how often the engine samples; 0 when read on demand
  std::vector<ReplicaUsage> replicas;
  std::vector<HostUsage> hosts;
  /// Why there are no GPU figures, when there are none ("no NVIDIA driver on this host:
  /// libnvidia-ml.so.1 not found"); empty when GPUs are reported.
  std::string gpu_note;
  /// Why a figure is missing, when the engine says (e.g. Slurm without accounting).
  std::string note;
};

struct UsageOptions {
  std::optional<double> since;  ///< only samples at or after (epoch seconds)
  size_t max_samples = 0;       ///< per replica and host, the newest; 0: every sample kept
};

/// The text `torchx status --resources` and `torchx top` print: one row per replica (and per GPU
/// it holds) with its newest sample, then the hosts' GPUs, then why figures are missing. A
/// replica without a sample says so in its row. `now` (epoch seconds) dates the newest sample;
/// `history` > 0 adds a CPU column drawn from that many of the newest samples (top).
std::string FormatUsage(const AppUsage& usage, double now, int history = 0);

/// 1536 -> "1.5KiB"; binary units as `free -h`.
std::string FormatBytes(int64_t bytes);

/// The JSON form every reader shares (CLI --json, REST, Python):
/// {"interval_seconds", "gpu_note", "note", "replicas": [{"role", "replica_id", "host",
/// "samples": [{"time", "cpu_percent", "rss_bytes", "processes", "gpus": [{"index", "name",
/// "utilization_percent", "memory_used_bytes", "memory_total_bytes"}]}]}], "hosts": [{"host",
/// "samples"}]}. A missing figure is null.
std::string UsageToJson(const AppUsage& usage);
/// The inverse; kInvalidArgument naming the field for a wrong shape.
Result<AppUsage> UsageFromJson(std::string_view json);
/// One sample as JSON (the stores keep samples in this form).
std::string SampleToJson(const UsageSample& sample);
Result<UsageSample> SampleFromJson(std::string_view json);

}  // namespace torchx::schedulers
