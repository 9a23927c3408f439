// A sweep's record as a driver writes it, at scale, without running the trials: N trials, at most
// P at a time, each claimed, recorded as submitted, then ended with a metric, in batches as the
// driver's turns make them; the sweep then ends, so that `sweep status` reads it as it is. Prints
// one JSON object: the time taken, the updates made, the bytes written (base rewrites and journal
// appends), the record's size on disk, and this process's peak RSS. For bench.py's sweeps rows.
// Usage: sweep_record STATE_DIR N P
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "sweeps/sweep_store.h"

using namespace torchx;
using namespace torchx::sweeps;

namespace {

std::uintmax_t FileSize(const std::filesystem::path& p) {
  std::error_code ec;
  auto n = std::filesystem::file_size(p, ec);
  return ec ? 0 : n;
}

// This process's peak RSS (VmHWM). Not getrusage's ru_maxrss: Linux carries into it the RSS of
// the process this one was exec'd from (a fork of bench.py's Python, MiBs more than this).
long PeakRssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

// Bytes this process has written through write(2) (its I/O accounting's `wchar`).
long long WrittenBytes() {
  std::ifstream io("/proc/self/io");
  std::string key;
  long long value = 0;
  while (io >> key >> value) {
    if (key == "wchar:") return value;
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: sweep_record STATE_DIR N P\n");
    return 2;
  }
  const std::string dir = SweepsDir(argv[1]);
  const int n = std::atoi(argv[2]);
  const int p = std::atoi(argv[3]);
  SweepStore store(dir);
  SweepRecord r;
  r.id = "bench-sweep";
  r.name = "bench";
  r.session = "torchx";
  r.cwd = argv[1];
  r.created = 1.8e9;
  r.scheduler = "local_cwd";
  r.component = "utils.sh";
  r.args = {"true", "@{i}"};
  r.space.params.push_back({"i", ParamSpec::Kind::kValues, {}, 0, 0});
  r.max_parallel = p;
  r.objective = Objective{"v", true, false};
  r.results_dir = dir + "/bench-sweep.results";
  for (int i = 0; i < n; ++i) {
    TrialRecord t;
    t.index = i;
    t.values = {{"i", Value(static_cast<std::int64_t>(i))}};
    r.trials.push_back(std::move(t));
  }
  if (!store.EnsureDir().ok() || !store.Create(r).ok()) return 1;
  r.trials = {};  // the driver has only the store's copy
  long long written0 = WrittenBytes();
  auto start = std::chrono::steady_clock::now();
  int updates = 0;
  auto update = [&](const std::function<Status(SweepRecord&)>& edit) {
    ++updates;
    if (!store.Update(r.id, edit).ok()) std::exit(1);
  };
  double now = 1.8e9;
  for (int first = 0; first < n; first += p) {
    int last = std::min(n, first + p);
    now += 1;
    update([&](SweepRecord& cur) {  // claimed
      for (int i = first; i < last; ++i) {
        TrialRecord& t = cur.trials.Mut(static_cast<size_t>(i));
        t.phase = composite::ChildPhase::kSubmitting;
        t.planned = {"local_cwd://torchx/bench-" + std::to_string(i) + "-x1y2z3", true, now};
      }
      return OkStatus();
    });
    update([&](SweepRecord& cur) {  // submitted and recorded
      for (int i = first; i < last; ++i) {
        TrialRecord& t = cur.trials.Mut(static_cast<size_t>(i));
        t.phase = composite::ChildPhase::kSubmitted;
        t.handle = t.planned.handle;
        t.planned = {};
        t.state = specs::AppState::kRunning;
        t.submitted = now;
      }
      return OkStatus();
    });
    update([&](SweepRecord& cur) {  // seen ended, with what they reported
      for (int i = first; i < last; ++i) {
        TrialRecord& t = cur.trials.Mut(static_cast<size_t>(i));
        t.phase = composite::ChildPhase::kDone;
        t.state = specs::AppState::kSucceeded;
        t.ended = now + 0.5;
        t.metrics = {{"v", i * 0.5}};
        t.objective = i * 0.5;
      }
      return OkStatus();
    });
  }
  update([&](SweepRecord& cur) {
    cur.final_state = specs::AppState::kSucceeded;
    cur.msg = "every trial succeeded";
    return OkStatus();
  });
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::uintmax_t record = FileSize(dir + "/bench-sweep.json") + FileSize(dir + "/bench-sweep.journal");
  std::printf(
      "{\"trials\": %d, \"updates\": %d, \"seconds\": %.3f, \"written_bytes\": %lld, \"record_bytes\": %ju, "
      "\"peak_rss_kib\": %ld}\n",
      n, updates, seconds, WrittenBytes() - written0, record, PeakRssKib());
  return 0;
}
