// The "sweep" scheduler: sweep handles answer status / wait / log / cancel / list / describe /
// delete like any app's, from the sweep's record and its trials' scheduler. The body of the
// driver (torchx-composite-driver ... sweep), which moves a sweep forward until it ends. And the
// trials table `torchx sweep status` prints.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "composite/child_ops.h"
#include "composite/composite_scheduler.h"
#include "composite/deferred_log.h"
#include "core/daemon.h"
#include "core/state_dir.h"
#include "sweeps/engine.h"
#include "sweeps/sweep_store.h"
#include "torchx/specs/app_handle.h"
#include "torchx/sweeps/sweep.h"

namespace torchx::sweeps {

// A sweep for the composite kernel: its record, store and child seam, and what is its own.
struct SweepKind : composite::KindOf<SweepKind, SweepRecord, TrialRecord, SweepStore, TrialBackend> {
  static constexpr composite::KindNames kNames{kSchedulerName, "sweep", "sweeps",
                                               "`torchx sweep run FILE` (or torchx.sweeps.run in Python)"};
  static std::unique_ptr<Backend> MakeBackend(runner::Runner& runner) { return MakeRunnerTrialBackend(runner); }
  static constexpr auto kChildren = &SweepRecord::trials;
  static std::string Label(const TrialRecord& t) { return fmt::format("trial {}", t.index); }
  static schedulers::MemberApp Member(const Record& r, const TrialRecord& t) { return TrialMember(r, t); }
  // No driver can start: what is left is marked not run, and the trials that run are refreshed.
  static Result<std::optional<Record>> WithoutDriver(Store& store, const std::string& id, Backend& backend,
                                                     const std::string& why) {
    return composite::AbandonThenRefresh(
        store, id, backend, [&why](SweepRecord& cur) { AbandonWaiting(cur, why); }, Refresh);
  }
  static schedulers::DescribeAppResponse Describe(const Record& r, Backend& backend, runner::Runner&) {
    return DescribeSweep(r, backend);
  }
  static Status Cancel(Store& store, const std::string&, const std::string& id, Backend& backend) {
    return CancelSweep(store, id, backend);
  }
  // The trials' reports, the tracker's config and Ax's state.
  static void RemoveOwnFiles(const Record& r) {
    std::error_code ec;
    std::filesystem::remove_all(r.results_dir, ec);
    std::filesystem::remove(TrackerConfigPath(r), ec);
    std::filesystem::remove(AxStatePath(r), ec);
  }
  static runner::RunnerOptions DriverRunnerOptions(const Record& r);
  static Result<std::unique_ptr<composite::DriverTurns>> StartTurns(Store& store, const std::string& id,
                                                                    Backend& backend, const Record& r);
};

namespace {

namespace fs = std::filesystem;
using schedulers::DescribeAppResponse;
using schedulers::DryRunInfo;
using schedulers::ListAppResponse;

// A trial's role: `index` alone names the trial app's only role.
Result<std::string> TrialAppRole(runner::Runner& runner, const TrialRole& found) {
  if (!found.role.empty()) return found.role;
  auto status = runner.Status(found.trial->handle);
  if (!status || !*status || (*status)->roles.empty()) return std::string();
  if ((*status)->roles.size() == 1) return (*status)->roles.front().role;
  std::vector<std::string> names;
  for (const auto& r : (*status)->roles) names.push_back(fmt::format("{}.{}", found.trial->index, r.role));
  return InvalidArgumentError(
      fmt::format("trial {} has several roles: give one of {}", found.trial->index, fmt::join(names, ", ")));
}

class SweepScheduler final : public composite::CompositeSchedulerOf<SweepKind> {
 public:
  using CompositeSchedulerOf::CompositeSchedulerOf;

  // `torchx describe`: the sweep file that runs it again, not its trials.
  Result<std::optional<std::string>> CompositeDefinition(const std::string& handle, bool json) override {
    TORCHX_ASSIGN_OR_RETURN(std::string def, SweepDefinition(handle, json));
    return std::optional(std::move(def));
  }
  // The dashboard's trials table and plots: each trial's values, state and metrics.
  Result<std::optional<std::string>> CompositeSection(const std::string& handle) override {
    auto view = ViewSweep(runner_, handle);
    if (!view) return std::optional<std::string>();
    return std::optional(SweepViewToJson(*view));
  }

  Result<std::unique_ptr<schedulers::LogIterator>> MemberLog(const std::string& app_id,
                                                             const schedulers::LogOptions& options) override {
    TORCHX_ASSIGN_OR_RETURN(auto record, store_.Get(app_id));
    if (!record) return NotFoundError(fmt::format("sweep {} does not exist", app_id));
    TORCHX_ASSIGN_OR_RETURN(TrialRole found, FindTrialRole(*record, options.role));
    if (!found.trial->handle.empty()) {
      schedulers::LogOptions trial_options = options;
      TORCHX_ASSIGN_OR_RETURN(trial_options.role, TrialAppRole(runner_, found));
      return runner_.LogLines(found.trial->handle, trial_options);
    }
    if (!options.follow) return schedulers::MakeLinesIterator({});  // not started: no lines yet
    // Followed: its lines once the driver submits it.
    auto look = [state_dir = state_dir_, id = app_id,
                 role = options.role](runner::Runner& runner) -> Result<composite::ChildLook> {
      SweepStore store(SweepsDir(state_dir));
      auto backend = MakeRunnerTrialBackend(runner);
      TORCHX_ASSIGN_OR_RETURN(auto record, composite::CurrentRecord<SweepKind>(store, state_dir, id, *backend));
      if (!record) return composite::ChildLook{"", "", true};
      TORCHX_ASSIGN_OR_RETURN(TrialRole now, FindTrialRole(*record, role));
      composite::ChildLook look;
      if (!now.trial->handle.empty()) {
        look.handle = now.trial->handle;
        TORCHX_ASSIGN_OR_RETURN(look.role, TrialAppRole(runner, now));
      }
      look.never =
          now.trial->phase == ChildPhase::kSkipped || now.trial->phase == ChildPhase::kDone || record->final_state;
      return look;
    };
    return composite::MakeDeferredChildLog(registry_, session_name(), clock_, options, std::move(look));
  }
};

std::string Duration(const TrialRow& t) {
  if (!t.submitted) return "-";
  double end =
      t.ended ? *t.ended : std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  double s = std::max(0.0, end - *t.submitted);
  if (s < 60) return fmt::format("{:.1f}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return fmt::format("{}h{:02}m", static_cast<int>(s) / 3600, (static_cast<int>(s) % 3600) / 60);
}

std::string Number(double v) { return fmt::format("{:.6g}", v); }

}  // namespace

void RegisterSweepScheduler(plugins::PluginRegistry& registry) {
  composite::RegisterComposite<SweepScheduler>(registry, kSchedulerName);
}

Result<std::unique_ptr<composite::DriverTurns>> SweepKind::StartTurns(Store& store, const std::string& id,
                                                                      Backend& backend, const Record& r) {
  // A trial left "submitting": a driver died between claiming it and recording its handle. Its
  // planned handle tells whether it was submitted (adopted), was not (claimed again), or cannot
  // tell (failed: submitting it again could run it twice).
  std::string why_unknown = fmt::format(
      "its submission was not recorded (the sweep's driver stopped, or the record could not be written), and {} "
      "cannot tell whether it happened: not submitted again; check `torchx list -s {}`",
      r.scheduler, r.scheduler);
  auto resolve = [&store, id, &backend, why_unknown] { return ResolveClaims(store, id, backend, why_unknown); };
  // A lookup that fails now is left to the turns, under the loop's error budget.
  if (Status s = resolve(); !s.ok()) std::fprintf(stderr, "torchx-composite-driver: %s\n", s.message().c_str());
  return std::unique_ptr<composite::DriverTurns>(std::make_unique<composite::AdvancingTurns<SweepKind>>(
      store, id, backend, [&store, id, &backend] { return Advance(store, id, backend); }, resolve));
}

runner::RunnerOptions SweepKind::DriverRunnerOptions(const Record& r) {
  runner::RunnerOptions options = composite::ChildRunnerOptions(r.session, nullptr);
  if (!r.component.empty()) options.component_defaults[r.component] = r.component_defaults;
  return options;
}

int RunSweepDriver(plugins::PluginRegistry& registry, const std::string& state_dir, const std::string& id,
                   int ready_fd) {
  return composite::RunDriverOf<SweepKind>(registry, state_dir, id, ready_fd);
}

Result<SweepView> ViewSweep(runner::Runner& runner, const std::string& handle, size_t failure_lines) {
  TORCHX_ASSIGN_OR_RETURN(SweepRecord found, composite::RecordOfHandle<SweepKind>(runner, handle));
  SweepRecord* record = &found;
  SweepView v;
  v.handle = handle;
  v.name = record->name;
  v.state = LiveState(*record);
  v.msg = record->msg;
  v.objective = record->objective;
  if (const TrialRecord* best = BestTrial(*record)) v.best = best->index;
  if (!record->final_state) v.objective_unreported = UnreportedObjective(*record, false);
  v.trials.reserve(record->trials.size());
  int tailed = 0;
  for (const TrialRecord& t : record->trials) {
    TrialRow row;
    row.index = t.index;
    row.values = t.values;
    row.state = t.state;
    row.handle = t.handle;
    row.msg = t.msg;
    row.submitted = t.submitted;
    row.ended = t.ended;
    row.metrics = t.metrics;
    row.objective = t.objective;
    row.generator = t.generator;
    // Each is a log read: the first kMaxTailedTrials failed trials only (the rest have their msg).
    constexpr int kMaxTailedTrials = 100;
    if (failure_lines > 0 && t.state == specs::AppState::kFailed && !t.handle.empty() && tailed++ < kMaxTailedTrials) {
      // Best effort: a trial whose logs are gone (deleted, a back-end without logs) has its msg.
      if (auto tails = runner.FailureTails(t.handle, failure_lines); tails && *tails) {
        for (const runner::ReplicaLogTail& tail : **tails) {
          row.stderr_tail.insert(row.stderr_tail.end(), tail.lines.begin(), tail.lines.end());
        }
        if (row.stderr_tail.size() > failure_lines) {
          row.stderr_tail.erase(row.stderr_tail.begin(), row.stderr_tail.end() - static_cast<long>(failure_lines));
        }
      }
    }
    v.trials.push_back(std::move(row));
  }
  if (v.objective) {
    const Objective& o = *v.objective;
    std::stable_sort(v.trials.begin(), v.trials.end(), [&o](const TrialRow& a, const TrialRow& b) {
      if (a.objective.has_value() != b.objective.has_value()) return a.objective.has_value();
      return a.objective && Better(*a.objective, *b.objective, o);
    });
  }
  return v;
}

std::string RenderSweepTable(const SweepView& v) {
  std::vector<std::string> params;
  for (const TrialRow& t : v.trials) {  // an ax sweep's trials have values once proposed
    if (t.values.empty()) continue;
    for (const auto& [k, _] : t.values) params.push_back(k);
    break;
  }
  bool generated =
      std::any_of(v.trials.begin(), v.trials.end(), [](const TrialRow& t) { return !t.generator.empty(); });
  std::vector<std::string> metrics;
  if (v.objective) metrics.push_back(v.objective->metric);
  for (const TrialRow& t : v.trials) {
    for (const auto& [k, _] : t.metrics) {
      if (std::find(metrics.begin(), metrics.end(), k) == metrics.end()) metrics.push_back(k);
    }
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"TRIAL"};
  header.insert(header.end(), params.begin(), params.end());
  header.push_back("STATE");
  header.push_back("DURATION");
  // Why a trial failed or did not run: its last stderr line, else what the sweep recorded.
  auto reason = [](const TrialRow& t) -> std::string {
    if (t.state == specs::AppState::kSucceeded || t.state == specs::AppState::kRunning) return "";
    std::string why = t.msg;
    for (auto it = t.stderr_tail.rbegin(); it != t.stderr_tail.rend(); ++it) {  // the last line with text
      if (it->find_first_not_of(" \t\r") != std::string::npos) {
        why = *it;
        break;
      }
    }
    for (char& c : why) {  // one table row: no control characters (a terminal's colour codes)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    }
    constexpr size_t kMaxReason = 80;
    if (why.size() > kMaxReason) {
      size_t cut = kMaxReason - 3;
      while (cut > 0 && (static_cast<unsigned char>(why[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
      why = why.substr(0, cut) + "...";
    }
    return why;
  };
  bool reasons = std::any_of(v.trials.begin(), v.trials.end(), [&](const TrialRow& t) { return !reason(t).empty(); });
  if (generated) header.push_back("BY");
  for (const std::string& m : metrics) header.push_back(v.objective && m == v.objective->metric ? m + "*" : m);
  if (reasons) header.push_back("REASON");  // last: it is the widest
  rows.push_back(header);
  for (const TrialRow& t : v.trials) {
    std::vector<std::string> row = {std::to_string(t.index) + (v.best && *v.best == t.index ? " (best)" : "")};
    for (const std::string& p : params) {
      auto it = std::find_if(t.values.begin(), t.values.end(), [&p](const auto& x) { return x.first == p; });
      row.push_back(it == t.values.end() ? "-" : ValueText(it->second));
    }
    row.emplace_back(specs::AppStateName(t.state));
    row.push_back(Duration(t));
    if (generated) row.push_back(t.generator.empty() ? "-" : t.generator);
    for (const std::string& m : metrics) {
      auto it = std::find_if(t.metrics.begin(), t.metrics.end(), [&m](const auto& x) { return x.first == m; });
      bool is_objective = v.objective && m == v.objective->metric;
      if (is_objective && t.objective) {
        row.push_back(Number(*t.objective));
      } else {
        row.push_back(it == t.metrics.end() ? "-" : Number(it->second));
      }
    }
    if (reasons) row.push_back(reason(t));
    rows.push_back(std::move(row));
  }
  std::vector<size_t> width(header.size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out = fmt::format("{} {}: {} trials", v.handle, specs::AppStateName(v.state), v.trials.size());
  if (v.objective) {
    out += fmt::format(", {} {} ({})", v.objective->minimize ? "minimize" : "maximize", v.objective->metric,
                       v.objective->best ? "best report" : "last report");
  }
  out += "\n";
  if (!v.msg.empty()) out += v.msg + "\n";
  if (v.objective_unreported) out += "warning: " + *v.objective_unreported + "\n";
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace torchx::sweeps
