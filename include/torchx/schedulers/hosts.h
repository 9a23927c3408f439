// The hosts a scheduler runs apps on (`torchx hosts`, the dashboard's Hosts page): each node's
// CPU, memory and GPU capacity, what of it is allocated to jobs or in use, its state in the
// engine's words, and which of the user's apps run there. The answer to "where is my job, and
// what else is on that node?" that SkyPilot's and Ray's cluster views give.
//
// A back-end with Capability::kHosts fills these from one read of its engine (Slurm: one sinfo and
// the batched queue; Ray: the dashboard's node summary; local_cwd: this host); the formats here
// are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace torchx::schedulers {

/// One of the user's apps with a replica on a host.
struct HostApp {
  std::string app_id;
  std::string handle;              ///< scheduler://session/app_id (the Runner fills it in)
  std::vector<std::string> where;  ///< its replicas there, "<role>/<replica>"; empty where unknown
};

/// A host or node. Optional figures are those the engine does not give.
struct HostInfo {
  std::string name;
  std::string address;
  std::string state;                     ///< the engine's word: "idle", "mixed", "down" (Slurm), "ALIVE" (Ray), "up"
  std::vector<std::string> groups;       ///< Slurm's partitions, a Ray head's "head"
  double cpus = 0;                       ///< capacity
  std::optional<double> cpus_allocated;  ///< given to jobs (Slurm, Ray's placement)
  std::optional<double> cpus_used;       ///< measured busy now (load, Ray's reading)
  int64_t memory_mb = 0;
  std::optional<int64_t> memory_allocated_mb;
  std::optional<int64_t> memory_used_mb;
  int gpus = 0;
  std::optional<int> gpus_allocated;
  std::vector<HostApp> apps;
};

/// `hosts` of `scheduler` as a table people read: one line per host (name, state, CPUs, memory,
/// GPUs as "allocated/capacity" or "used/capacity"), then its apps indented.
std::string FormatHosts(const std::string& scheduler, const std::vector<HostInfo>& hosts);

/// {"scheduler", "hosts": [{"name", "address", "state", "groups", "cpus", "cpus_allocated", ...,
/// "apps": [{"app_id", "handle", "where"}]}]}: the same as data (`--json`, the REST API).
std::string HostsToJson(const std::string& scheduler, const std::vector<HostInfo>& hosts);

}  // namespace torchx::schedulers
