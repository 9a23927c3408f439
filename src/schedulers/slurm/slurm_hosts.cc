#include "schedulers/slurm/slurm_hosts.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

namespace torchx::schedulers::slurm {
namespace {

std::vector<std::string_view> Columns(std::string_view line) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at <= line.size()) {
    size_t bar = line.find('|', at);
    if (bar == std::string_view::npos) {
      if (at < line.size()) out.push_back(line.substr(at));
      break;
    }
    out.push_back(line.substr(at, bar - at));
    at = bar + 1;
  }
  for (auto& c : out) {
    while (!c.empty() && c.back() == ' ') c.remove_suffix(1);
    while (!c.empty() && c.front() == ' ') c.remove_prefix(1);
  }
  return out;
}

std::optional<double> Number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::string s(text);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (!end || *end != '\0') return std::nullopt;
  return v;
}

}  // namespace

int GpusInGres(std::string_view gres) {
  int total = 0;
  while (!gres.empty()) {
    size_t comma = gres.find(',');
    std::string_view item = gres.substr(0, comma);
    gres = comma == std::string_view::npos ? std::string_view() : gres.substr(comma + 1);
    // A comma inside "(IDX:0,2)" belongs to the item before it: such pieces name no gres.
    if (item != "gpu" && !item.starts_with("gpu:")) continue;  // not gpumem, gpuutil
    item = item.substr(0, item.find('('));
    size_t colon = item.rfind(':');
    if (colon == std::string_view::npos) continue;
    if (auto n = Number(item.substr(colon + 1)); n && *n >= 0 && *n < 1e6) total += static_cast<int>(*n);
  }
  return total;
}

Result<std::vector<HostInfo>> ParseSinfoNodes(std::string_view text) {
  std::vector<HostInfo> hosts;
  std::map<std::string, size_t, std::less<>> index;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.find_first_not_of(" \r") == std::string_view::npos) continue;
    auto c = Columns(line);
    if (c.size() < 9) {
      return InvalidArgumentError(
          fmt::format("sinfo: row {} has {} columns, expected 9: `{}`", line_no, c.size(), line.substr(0, 200)));
    }
    std::string partition(c[8]);
    if (!partition.empty() && partition.back() == '*') partition.pop_back();
    auto [it, added] = index.try_emplace(std::string(c[0]), hosts.size());
    if (!added) {
      hosts[it->second].groups.push_back(partition);
      continue;
    }
    HostInfo h;
    h.name = std::string(c[0]);
    h.state = std::string(c[1]);
    // CPUsState: allocated/idle/other/total.
    std::vector<double> cpus;
    for (std::string_view rest = c[2]; !rest.empty();) {
      size_t slash = rest.find('/');
      if (auto n = Number(rest.substr(0, slash))) cpus.push_back(*n);
      rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    }
    if (cpus.size() != 4) {
      return InvalidArgumentError(fmt::format("sinfo: row {}: CPUsState `{}` is not A/I/O/T", line_no, c[2]));
    }
    h.cpus = cpus[3];
    h.cpus_allocated = cpus[0];
    h.memory_mb = static_cast<int64_t>(Number(c[3]).value_or(0));
    if (auto alloc = Number(c[4])) h.memory_allocated_mb = static_cast<int64_t>(*alloc);
    h.gpus = GpusInGres(c[5]);
    if (h.gpus > 0) h.gpus_allocated = GpusInGres(c[6]);
    h.address = std::string(c[7]);
    h.groups.push_back(partition);
    hosts.push_back(std::move(h));
  }
  return hosts;
}

void PlaceJobs(const std::vector<SlurmJob>& jobs, std::vector<HostInfo>& hosts) {
  for (const SlurmJob& j : jobs) {
    if (j.state != "RUNNING" && j.state != "COMPLETING") continue;
    auto host = std::find_if(hosts.begin(), hosts.end(), [&](const HostInfo& h) { return h.name == j.hostname; });
    if (host == hosts.end()) continue;
    auto app =
        std::find_if(host->apps.begin(), host->apps.end(), [&](const HostApp& a) { return a.app_id == j.job_id; });
    if (app == host->apps.end()) app = host->apps.insert(host->apps.end(), HostApp{j.job_id, "", {}});
    auto [role, replica] = RoleAndReplica(j.name);
    app->where.push_back(fmt::format("{}/{}", role, replica));
  }
}

std::vector<std::string> StacksCommand(const std::string& helper, const SlurmJob& job,
                                       const std::vector<std::string>& extra) {
  // A het job's components are reached through the leader (srun refuses a component's own id);
  // a plain job or an array task by its own id, which its processes carry.
  const std::string& id = job.component.empty() && !job.raw_id.empty() ? job.raw_id : job.job_id;
  std::vector<std::string> argv = {"srun", "--overlap", "--jobid=" + id};
  if (!job.component.empty()) argv.push_back("--het-group=" + job.component);
  // One task on the replica's one node, its output srun's own.
  for (const char* a : {"--nodes=1", "--ntasks=1", "--quiet"}) argv.push_back(a);
  argv.push_back(helper);
  // Slurm sets SLURM_JOB_ID (the leader's id in every component) and SLURMD_NODENAME in each
  // process of a step; SLURM_STEP_ID tells the app's step from this one's (and from the batch
  // step's, which has none).
  for (const std::string& a :
       {std::string("--env"), "SLURM_JOB_ID=" + id, std::string("--env-same"), std::string("SLURMD_NODENAME"),
        std::string("--env-differs"), std::string("SLURM_STEP_ID")}) {
    argv.push_back(a);
  }
  // A het step's tasks are numbered across its components (one task each here): component k's is
  // SLURM_PROCID=k, which tells two components on one node apart.
  if (!job.component.empty()) {
    argv.push_back("--env");
    argv.push_back("SLURM_PROCID=" + job.component);
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

}  // namespace torchx::schedulers::slurm
