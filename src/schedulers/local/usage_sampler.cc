#include "schedulers/local/usage_sampler.h"

#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <set>

namespace torchx::schedulers::local {
namespace {

// Field `i` (0-based) of what follows the command name's closing parenthesis.
std::vector<std::string_view> Fields(std::string_view rest) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < rest.size()) {
    while (i < rest.size() && rest[i] == ' ') ++i;
    size_t j = i;
    while (j < rest.size() && rest[j] != ' ' && rest[j] != '\n') ++j;
    if (j > i) out.push_back(rest.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

template <typename T>
bool Num(std::string_view s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool ReadSmall(const char* path, char* buf, size_t cap, size_t& len) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = ::read(fd, buf, cap);
  ::close(fd);
  if (n <= 0) return false;
  len = static_cast<size_t>(n);
  return true;
}

}  // namespace

std::optional<ProcStat> ParseProcStat(std::string_view text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  ProcStat st;
  std::string_view pid = text.substr(0, open);
  while (!pid.empty() && pid.back() == ' ') pid.remove_suffix(1);
  if (!Num(pid, st.pid)) return std::nullopt;
  // After ")": state(3) ppid(4) pgrp(5) ... utime(14) stime(15) ... starttime(22) vsize(23) rss(24).
  std::vector<std::string_view> f = Fields(text.substr(close + 1));
  if (f.size() < 22) return std::nullopt;
  uint64_t utime = 0, stime = 0;
  if (f[0].size() != 1) return std::nullopt;
  st.state = f[0][0];
  if (!Num(f[1], st.ppid) || !Num(f[2], st.pgrp) || !Num(f[11], utime) || !Num(f[12], stime) ||
      !Num(f[19], st.start_ticks) || !Num(f[21], st.rss_pages)) {
    return std::nullopt;
  }
  st.cpu_ticks = utime + stime;
  return st;
}

std::vector<ProcStat> SystemProcSource::Processes() {
  std::vector<ProcStat> out;
  DIR* dir = ::opendir("/proc");
  if (!dir) return out;
  char path[288];  // "/proc/" + a d_name of up to 255 bytes + "/stat"
  char buf[1024];
  while (struct dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    std::snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
    size_t len = 0;
    if (!ReadSmall(path, buf, sizeof(buf), len)) continue;  // gone since readdir
    if (auto st = ParseProcStat(std::string_view(buf, len))) out.push_back(*st);
  }
  ::closedir(dir);
  return out;
}

double SystemProcSource::UptimeSeconds() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

long SystemProcSource::TicksPerSecond() { return ::sysconf(_SC_CLK_TCK); }
long SystemProcSource::PageSize() { return ::sysconf(_SC_PAGESIZE); }

UsageSampler::Result UsageSampler::Sample(const std::vector<int>& leaders, double now_epoch) {
  Result out;
  out.replicas.resize(leaders.size());
  for (UsageSample& s : out.replicas) s.time = now_epoch;
  std::vector<ProcStat> all = procs_.Processes();
  double uptime = procs_.UptimeSeconds();
  double hz = static_cast<double>(std::max(1L, procs_.TicksPerSecond()));
  int64_t page = procs_.PageSize();

  std::map<int, std::vector<size_t>> children;  // ppid -> indexes into all
  std::map<int, std::vector<size_t>> groups;    // pgrp -> indexes
  for (size_t i = 0; i < all.size(); ++i) {
    children[all[i].ppid].push_back(i);
    groups[all[i].pgrp].push_back(i);
  }
  // Each replica's tree: the leader's descendants, what remains in its process group (a child
  // reparented away), and their descendants.
  std::map<int, size_t> owner;  // pid -> replica
  for (size_t r = 0; r < leaders.size(); ++r) {
    if (leaders[r] <= 0) continue;
    std::vector<int> todo = {leaders[r]};
    if (auto g = groups.find(leaders[r]); g != groups.end()) {
      for (size_t i : g->second) todo.push_back(all[i].pid);
    }
    while (!todo.empty()) {
      int pid = todo.back();
      todo.pop_back();
      if (!owner.emplace(pid, r).second) continue;
      if (auto c = children.find(pid); c != children.end()) {
        for (size_t i : c->second) todo.push_back(all[i].pid);
      }
    }
  }

  std::map<int, Seen> seen;
  std::vector<double> cpu(leaders.size(), 0);
  std::vector<int64_t> rss(leaders.size(), 0);
  std::vector<int> count(leaders.size(), 0);
  for (const ProcStat& p : all) {
    auto o = owner.find(p.pid);
    // An exited process not yet reaped holds no memory: it is not counted (a replica whose
    // leader is one has ended, and has no figures).
    if (o == owner.end() || p.state == 'Z' || p.state == 'X') continue;
    size_t r = o->second;
    seen[p.pid] = {p.start_ticks, p.cpu_ticks};
    double started = static_cast<double>(p.start_ticks) / hz;
    uint64_t base = 0;
    double since = started;
    if (auto prev = seen_.find(p.pid); prev != seen_.end() && prev->second.start_ticks == p.start_ticks) {
      base = std::min(prev->second.cpu_ticks, p.cpu_ticks);
      since = prev_uptime_.value_or(started);
    }  // else new to the sampler: its whole life so far
    double elapsed = uptime - since;
    if (elapsed > 0.05) cpu[r] += static_cast<double>(p.cpu_ticks - base) / hz / elapsed * 100.0;
    rss[r] += p.rss_pages * page;
    ++count[r];
  }
  seen_ = std::move(seen);
  prev_uptime_ = uptime;
  for (size_t r = 0; r < leaders.size(); ++r) {
    if (count[r] == 0) continue;
    out.replicas[r].cpu_percent = cpu[r];
    out.replicas[r].rss_bytes = rss[r];
    out.replicas[r].processes = count[r];
  }

  if (!gpus_) return out;
  auto devices = gpus_->Sample();
  if (!devices) return out;
  UsageSample host;
  host.time = now_epoch;
  for (const devices::GpuDeviceSample& d : *devices) {
    GpuUsage dev{d.index, d.name, d.utilization_percent, d.memory_used_bytes, d.memory_total_bytes};
    host.gpus.push_back(dev);
    // Per replica: its processes' memory; utilisation by process where the driver samples it,
    // else the device's (shared with whatever else runs there).
    std::map<size_t, GpuUsage> mine;
    std::set<size_t> has_process_util;
    for (const devices::GpuProcess& gp : d.processes) {
      auto o = owner.find(gp.pid);
      if (o == owner.end()) continue;
      auto [it, fresh] =
          mine.try_emplace(o->second, GpuUsage{d.index, d.name, std::nullopt, std::nullopt, d.memory_total_bytes});
      if (gp.memory_used_bytes)
        it->second.memory_used_bytes = it->second.memory_used_bytes.value_or(0) + *gp.memory_used_bytes;
      if (gp.utilization_percent) {
        it->second.utilization_percent = it->second.utilization_percent.value_or(0) + *gp.utilization_percent;
        has_process_util.insert(o->second);
      }
    }
    for (auto& [r, usage] : mine) {
      if (!has_process_util.count(r)) usage.utilization_percent = d.utilization_percent;
      out.replicas[r].gpus.push_back(std::move(usage));
    }
  }
  out.host = std::move(host);
  return out;
}

}  // namespace torchx::schedulers::local
