// The "sweep" scheduler: sweep handles answer status / wait / log / cancel / list / describe /
// delete like any app's, from the sweep's record and its trials' scheduler. The body of the
// driver (torchx-composite-driver ... sweep), which moves a sweep forward until it ends. And the
// trials table `torchx sweep status` prints.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "composite/children.h"
#include "composite/deferred_log.h"
#include "composite/driver_loop.h"
#include "composite/driver_process.h"
#include "core/daemon.h"
#include "core/state_dir.h"
#include "sweeps/engine.h"
#include "sweeps/sweep_store.h"
#include "torchx/specs/app_handle.h"
#include "torchx/sweeps/sweep.h"

namespace torchx::sweeps {
namespace {

namespace fs = std::filesystem;
using schedulers::DescribeAppResponse;
using schedulers::DryRunInfo;
using schedulers::ListAppResponse;

// The record, brought up to date, and moving again if nothing moves it: a driver holds the lock
// (the record as it is), else the driver died before the sweep ended and a new one is started
// from the record; if none can start, what is left is marked not run and the trials that run
// are refreshed.
Result<std::optional<SweepRecord>> CurrentRecord(SweepStore& store, const std::string& state_dir, const std::string& id,
                                                 TrialBackend& backend) {
  TORCHX_ASSIGN_OR_RETURN(auto record, store.Get(id));
  if (!record || record->final_state || composite::DriverRunning(store.dir(), id)) return record;
  Status started = composite::StartDriver(state_dir, store.dir(), id, record->cwd, "sweep");
  if (started.ok()) return record;
  auto abandoned = store.Update(id, [&](SweepRecord& cur) {
    AbandonWaiting(cur, "the sweep's driver cannot start: " + started.message());
    return OkStatus();
  });
  if (!abandoned) return abandoned.error();
  TORCHX_ASSIGN_OR_RETURN(SweepRecord r, Refresh(store, id, backend));
  return std::optional(std::move(r));
}

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

class SweepScheduler : public schedulers::Scheduler {
 public:
  SweepScheduler(plugins::PluginRegistry& registry, const schedulers::SchedulerContext& context)
      : Scheduler(std::string(kSchedulerName), context.session_name),
        registry_(registry),
        clock_(context.clock),
        state_dir_(internal::DefaultStateDir()),
        store_(SweepsDir(state_dir_)),
        runner_(registry, composite::ChildRunnerOptions(context.session_name, context.clock)),
        backend_(MakeRunnerTrialBackend(runner_)) {}

  specs::RunOpts run_opts() const override { return {}; }
  // Its state is in its engine (or on disk): a thread may have an instance of its own.
  bool instance_per_thread() const override { return true; }
  schedulers::Capabilities capabilities() const override {
    using schedulers::Capability;
    return {Capability::kLogs, Capability::kFollowLogs, Capability::kList, Capability::kDelete, Capability::kComposite};
  }
  bool requires_resources() const override { return false; }

  Result<std::string> Schedule(const DryRunInfo&) override { return NotASweepRun(); }

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

  Result<std::optional<DescribeAppResponse>> Describe(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(auto record, Current(app_id));
    if (!record) return std::optional<DescribeAppResponse>();
    return std::optional(DescribeSweep(*record, *backend_));
  }

  Result<std::vector<ListAppResponse>> List() override {
    TORCHX_ASSIGN_OR_RETURN(auto records, store_.List());
    std::vector<ListAppResponse> out;
    for (SweepRecord& r : records) {
      if (!r.final_state) {
        auto current = Current(r.id);
        if (current && *current) r = std::move(**current);
      }
      ListAppResponse l;
      l.app_id = r.id;
      l.name = r.name;
      l.state = LiveState(r);
      l.created = r.created;
      if (r.final_state) {
        for (const TrialRecord& t : r.trials) {
          if (t.ended) l.ended = std::max(l.ended.value_or(r.created), *t.ended);
        }
        if (*r.final_state != specs::AppState::kSucceeded) l.reason = r.msg;
      }
      for (const TrialRecord& t : r.trials) l.members.push_back(TrialMember(r, t));
      out.push_back(std::move(l));
    }
    return out;
  }

  Status Delete(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(auto record, Current(app_id));
    if (!record) return NotFoundError(fmt::format("sweep {} does not exist", app_id));
    if (!record->final_state) {
      return FailedPreconditionError(
          fmt::format("sweep {} is {}: cancel it first", app_id, specs::AppStateName(LiveState(*record))));
    }
    std::vector<composite::LabelledChild> children;
    for (const TrialRecord& t : record->trials) children.push_back({fmt::format("trial {}", t.index), t.handle});
    TORCHX_RETURN_IF_ERROR(
        composite::DeleteChildren(children, [&](const std::string& h) { return runner_.Delete(h); }));
    std::error_code ec;
    fs::remove_all(record->results_dir, ec);
    fs::remove(TrackerConfigPath(*record), ec);
    fs::remove(AxStatePath(*record), ec);
    return store_.Remove(app_id);
  }

  Result<std::unique_ptr<schedulers::LogIterator>> LogIter(const std::string& app_id,
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
      TORCHX_ASSIGN_OR_RETURN(auto record, CurrentRecord(store, state_dir, id, *backend));
      if (!record) return composite::ChildLook{"", "", true};
      TORCHX_ASSIGN_OR_RETURN(TrialRole now, FindTrialRole(*record, role));
      composite::ChildLook look;
      if (!now.trial->handle.empty()) {
        look.handle = now.trial->handle;
        TORCHX_ASSIGN_OR_RETURN(look.role, TrialAppRole(runner, now));
      }
      look.never =
          now.trial->phase == TrialPhase::kSkipped || now.trial->phase == TrialPhase::kDone || record->final_state;
      return look;
    };
    return composite::MakeDeferredChildLog(registry_, session_name(), clock_, options, std::move(look));
  }

  bool WaitForUpdate(const std::string& app_id, std::chrono::milliseconds max_wait) override {
    auto record = store_.Get(app_id);
    if (!record || !*record || (*record)->final_state) return false;
    for (const TrialRecord& t : (*record)->trials) {
      if (t.phase == TrialPhase::kSubmitted) {
        backend_->WaitForUpdate(t.handle, max_wait);
        return true;
      }
    }
    return false;
  }

 protected:
  Result<DryRunInfo> DoDryRun(const specs::AppDef&, const specs::ResolvedCfg&) override { return NotASweepRun(); }
  Status DoCancel(const std::string& app_id) override { return CancelSweep(store_, app_id, *backend_); }

 private:
  static Status NotASweepRun() {
    return InvalidArgumentError(
        "scheduler `sweep` runs sweeps: use `torchx sweep run FILE` (or torchx.sweeps.run in Python); `torchx run` "
        "takes a job scheduler");
  }
  Result<std::optional<SweepRecord>> Current(const std::string& id) {
    return CurrentRecord(store_, state_dir_, id, *backend_);
  }

  plugins::PluginRegistry& registry_;
  std::shared_ptr<const Clock> clock_;
  std::string state_dir_;
  SweepStore store_;
  runner::Runner runner_;
  std::unique_ptr<TrialBackend> backend_;
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
  (void)registry.AddCompositeScheduler(
      std::string(kSchedulerName), "builtin",
      [&registry](const schedulers::SchedulerContext& context) -> Result<std::unique_ptr<schedulers::Scheduler>> {
        return std::unique_ptr<schedulers::Scheduler>(std::make_unique<SweepScheduler>(registry, context));
      });
}

namespace {

// A sweep's turn of the driver loop: advance (refresh the trials and their reports, submit while
// fewer than max_parallel run), and wait on the first running trial.
class SweepTurns final : public composite::TurnsOver<SweepStore, TrialBackend> {
 public:
  SweepTurns(SweepStore& store, std::string id, TrialBackend& backend, std::string why_unknown)
      : TurnsOver(store, std::move(id), backend), why_unknown_(std::move(why_unknown)) {}

  Result<composite::TurnResult> Turn() override {
    TORCHX_ASSIGN_OR_RETURN(SweepRecord r, Advance(store_, id_, backend_));
    if (r.final_state) return composite::TurnResult{true, std::nullopt};
    // Trials still claimed after a turn (no claim of this driver's is in flight between turns):
    // a dead driver's claims waiting for a start that may still be recorded, or this driver's
    // whose handles could not be recorded. Resolved by their planned handles, as at the start.
    if (std::any_of(r.trials.begin(), r.trials.end(),
                    [](const TrialRecord& t) { return t.phase == TrialPhase::kSubmitting; })) {
      TORCHX_RETURN_IF_ERROR(ResolveClaims(store_, id_, backend_, why_unknown_));
      return composite::TurnResult{};  // the next turn after an idle
    }
    if (r.cancel_requested && !swept_) {  // once: cancel what the canceller may have missed
      swept_ = true;
      for (const TrialRecord& t : r.trials) {
        if (t.phase == TrialPhase::kSubmitted) (void)backend_.Cancel(t.handle);
      }
    }
    composite::TurnResult out;
    for (const TrialRecord& t : r.trials) {
      if (t.phase == TrialPhase::kSubmitted) {
        out.wait_on = t.handle;
        break;
      }
    }
    return out;
  }

 private:
  std::string why_unknown_;
  bool swept_ = false;
};

}  // namespace

int RunSweepDriver(plugins::PluginRegistry& registry, const std::string& state_dir, const std::string& id,
                   int ready_fd) {
  SweepStore store(SweepsDir(state_dir));
  composite::DriverStart start("sweep", id, ready_fd);
  auto lock = start.TakeLock(store.dir());
  if (!lock) return start.exit_code();
  auto record = store.Get(id);
  if (!record) return start.Fail(record.error().message());
  if (!*record) return start.Fail("does not exist");
  runner::RunnerOptions options = composite::ChildRunnerOptions((*record)->session, nullptr);
  if (!(*record)->component.empty()) options.component_defaults[(*record)->component] = (*record)->component_defaults;
  runner::Runner runner(registry, options);
  auto backend = MakeRunnerTrialBackend(runner);
  // A trial left "submitting": a driver died between claiming it and recording its handle. Its
  // planned handle tells whether it was submitted (adopted), was not (claimed again), or cannot
  // tell (failed: submitting it again could run it twice).
  std::string why_unknown = fmt::format(
      "its submission was not recorded (the sweep's driver stopped, or the record could not be written), and {} "
      "cannot tell whether it happened: not submitted again; check `torchx list -s {}`",
      (*record)->scheduler, (*record)->scheduler);
  Status resumed = ResolveClaims(store, id, *backend, why_unknown);
  if (!resumed.ok()) return start.Fail(resumed.message());
  start.Ready();
  SweepTurns turns(store, id, *backend, std::move(why_unknown));
  SystemClock clock;
  return composite::RunDriverLoop(turns, clock, "torchx-composite-driver");
}

Result<SweepView> ViewSweep(runner::Runner& runner, const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(specs::ParsedAppHandle parsed, specs::ParseAppHandle(handle));
  if (parsed.scheduler_backend != kSchedulerName) {
    return InvalidArgumentError(fmt::format("{}: not a sweep handle (sweep://<session>/<id>)", handle));
  }
  std::string state_dir = internal::DefaultStateDir();
  SweepStore store(SweepsDir(state_dir));
  auto backend = MakeRunnerTrialBackend(runner);
  TORCHX_ASSIGN_OR_RETURN(auto record, CurrentRecord(store, state_dir, parsed.app_id, *backend));
  if (!record) return NotFoundError(fmt::format("sweep {} does not exist", handle));
  SweepView v;
  v.handle = handle;
  v.name = record->name;
  v.state = LiveState(*record);
  v.msg = record->msg;
  v.objective = record->objective;
  if (const TrialRecord* best = BestTrial(*record)) v.best = best->index;
  v.trials.reserve(record->trials.size());
  for (TrialRecord& t : record->trials) {
    TrialRow row;
    row.index = t.index;
    row.values = std::move(t.values);
    row.state = t.state;
    row.handle = std::move(t.handle);
    row.msg = std::move(t.msg);
    row.submitted = t.submitted;
    row.ended = t.ended;
    row.metrics = std::move(t.metrics);
    row.objective = t.objective;
    row.generator = std::move(t.generator);
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
  if (generated) header.push_back("BY");
  for (const std::string& m : metrics) header.push_back(v.objective && m == v.objective->metric ? m + "*" : m);
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
