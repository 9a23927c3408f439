// The "pipeline" scheduler: pipeline handles answer status / wait / log / cancel / list /
// describe / delete like any app's, from the pipeline's record and its steps' schedulers. And the
// body of torchx-pipeline-driver, which moves a pipeline forward until it ends.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "core/state_dir.h"
#include "pipelines/driver_process.h"
#include "pipelines/engine.h"
#include "pipelines/pipeline_store.h"
#include "torchx/pipelines/pipeline.h"

namespace torchx::pipelines {
namespace {

namespace fs = std::filesystem;
using schedulers::DescribeAppResponse;
using schedulers::DryRunInfo;
using schedulers::ListAppResponse;

runner::RunnerOptions RunnerOptionsFor(const std::string& session, std::shared_ptr<const Clock> clock) {
  runner::RunnerOptions o;
  o.session_name = session;
  o.clock = std::move(clock);
  return o;
}

// One step's lines, for a step that had not started when asked: without `follow`, none; with
// it, the step's own lines once the pipeline submits it (none if it never runs).
class StepLogIterator : public schedulers::LogIterator {
 public:
  StepLogIterator(plugins::PluginRegistry& registry, PipelineStore store, std::string id, std::string step,
                  schedulers::LogOptions options, std::shared_ptr<const Clock> clock)
      : registry_(registry), store_(std::move(store)), id_(std::move(id)), step_(std::move(step)),
        options_(std::move(options)), clock_(clock ? std::move(clock) : std::make_shared<SystemClock>()) {}

  Result<std::optional<std::string>> Next() override {
    TORCHX_ASSIGN_OR_RETURN(bool started, Start());
    if (!started) return std::optional<std::string>();
    return inner_->Next();
  }
  bool Ready() override { return inner_ ? inner_->Ready() : !options_.follow; }
  Result<bool> NextBatch(const std::function<void(std::string_view)>& sink) override {
    TORCHX_ASSIGN_OR_RETURN(bool started, Start());
    if (!started) return false;
    return inner_->NextBatch(sink);
  }

 private:
  // Waits (following) until the step has a handle; false when it will never have one.
  Result<bool> Start() {
    while (!inner_) {
      if (!options_.follow) return false;
      TORCHX_ASSIGN_OR_RETURN(auto record, store_.Get(id_));
      const StepRecord* s = record ? record->Step(step_) : nullptr;
      if (!s || s->phase == StepPhase::kSkipped || s->phase == StepPhase::kDone || record->final_state) {
        if (!s || s->handle.empty()) return false;
      }
      if (s && !s->handle.empty()) {
        runner_ = std::make_unique<runner::Runner>(registry_, RunnerOptionsFor(record->session, clock_));
        TORCHX_ASSIGN_OR_RETURN(inner_, runner_->LogLines(s->handle, options_));
        break;
      }
      clock_->SleepFor(std::chrono::milliseconds(500));
    }
    return true;
  }

  plugins::PluginRegistry& registry_;
  PipelineStore store_;
  std::string id_;
  std::string step_;
  schedulers::LogOptions options_;
  std::shared_ptr<const Clock> clock_;
  std::unique_ptr<runner::Runner> runner_;
  std::unique_ptr<schedulers::LogIterator> inner_;
};

class PipelineScheduler : public schedulers::Scheduler {
 public:
  PipelineScheduler(plugins::PluginRegistry& registry, const schedulers::SchedulerContext& context)
      : Scheduler(std::string(kSchedulerName), context.session_name),
        registry_(registry),
        clock_(context.clock),
        state_dir_(internal::DefaultStateDir()),
        store_((fs::path(state_dir_) / "pipelines").string()),
        runner_(registry, RunnerOptionsFor(context.session_name, context.clock)),
        backend_(MakeRunnerStepBackend(runner_)) {}

  specs::RunOpts run_opts() const override { return {}; }
  unsigned capabilities() const override {
    return schedulers::kCapLogs | schedulers::kCapList | schedulers::kCapDelete | schedulers::kCapFollowLogs;
  }
  bool requires_resources() const override { return false; }

  Result<std::string> Schedule(const DryRunInfo&) override { return NotAPipelineRun(); }

  Result<std::optional<DescribeAppResponse>> Describe(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(auto record, Current(app_id));
    if (!record) return std::optional<DescribeAppResponse>();
    return std::optional(DescribePipeline(*record, *backend_));
  }

  Result<std::vector<ListAppResponse>> List() override {
    TORCHX_ASSIGN_OR_RETURN(auto records, store_.List());
    std::vector<ListAppResponse> out;
    for (PipelineRecord& r : records) {
      if (!r.final_state) {
        auto current = Current(r.id);
        if (current && *current) r = std::move(**current);
      }
      ListAppResponse l;
      l.app_id = r.id;
      l.name = r.name;
      l.state = LiveState(r);
      l.created = r.created;
      out.push_back(std::move(l));
    }
    return out;
  }

  Status Delete(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(auto record, Current(app_id));
    if (!record) return NotFoundError(fmt::format("pipeline {} does not exist", app_id));
    if (!record->final_state) {
      return FailedPreconditionError(
          fmt::format("pipeline {} is {}: cancel it first", app_id, specs::AppStateName(LiveState(*record))));
    }
    // The steps' own records go too (where their schedulers keep any), as deleting an app does.
    for (const StepRecord& s : record->steps) {
      if (s.handle.empty()) continue;
      Status st = runner_.Delete(s.handle);
      if (!st.ok() && st.code() != StatusCode::kNotFound && st.code() != StatusCode::kUnimplemented) {
        return st.WithContext("steps." + s.name);
      }
    }
    return store_.Remove(app_id);
  }

  Result<std::unique_ptr<schedulers::LogIterator>> LogIter(const std::string& app_id,
                                                           const schedulers::LogOptions& options) override {
    TORCHX_ASSIGN_OR_RETURN(auto record, store_.Get(app_id));
    if (!record) return NotFoundError(fmt::format("pipeline {} does not exist", app_id));
    TORCHX_ASSIGN_OR_RETURN(StepRole found, FindStepRole(*record, options.role));
    schedulers::LogOptions step_options = options;
    step_options.role = found.role;
    if (!found.step->handle.empty()) return runner_.LogLines(found.step->handle, step_options);
    // A step that has not started has no lines yet; followed, its lines come once it starts.
    return std::unique_ptr<schedulers::LogIterator>(
        std::make_unique<StepLogIterator>(registry_, store_, app_id, found.step->name, step_options, clock_));
  }

  bool WaitForUpdate(const std::string& app_id, std::chrono::milliseconds max_wait) override {
    auto record = store_.Get(app_id);
    if (!record || !*record || (*record)->final_state) return false;
    for (const StepRecord& s : (*record)->steps) {
      if (s.phase == StepPhase::kSubmitted) {
        backend_->WaitForUpdate(s.handle, max_wait);
        return true;
      }
    }
    return false;
  }

 protected:
  Result<DryRunInfo> DoDryRun(const specs::AppDef&, const specs::ResolvedCfg&) override { return NotAPipelineRun(); }

  Status DoCancel(const std::string& app_id) override { return CancelPipeline(store_, app_id, *backend_); }

 private:
  static Status NotAPipelineRun() {
    return InvalidArgumentError(
        "scheduler `pipeline` runs pipeline files: use `torchx pipeline run FILE` (or torchx.pipelines.run in "
        "Python); `torchx run` takes a job scheduler");
  }

  // The record, brought up to date: a pipeline the launcher sequences gets its driver back if the
  // driver died (a reboot, kill -9) and the pipeline has not ended; an all-Slurm one is refreshed
  // from Slurm (there is no driver: Slurm sequences it).
  Result<std::optional<PipelineRecord>> Current(const std::string& id) {
    TORCHX_ASSIGN_OR_RETURN(auto record, store_.Get(id));
    if (!record || record->final_state) return record;
    if (record->slurm_native) {
      TORCHX_ASSIGN_OR_RETURN(PipelineRecord r, Refresh(store_, id, *backend_));
      return std::optional(std::move(r));
    }
    if (!DriverRunning(store_.dir(), id)) {
      TORCHX_ASSIGN_OR_RETURN(PipelineRecord r, store_.Update(id, [&](PipelineRecord& cur) -> Status {
        if (cur.final_state || DriverRunning(store_.dir(), id)) return OkStatus();
        TORCHX_ASSIGN_OR_RETURN(cur.driver_pid, StartDriver(state_dir_, store_.dir(), id, cur.cwd));
        return OkStatus();
      }));
      return std::optional(std::move(r));
    }
    return record;
  }

  plugins::PluginRegistry& registry_;
  std::shared_ptr<const Clock> clock_;
  std::string state_dir_;
  PipelineStore store_;
  runner::Runner runner_;
  std::unique_ptr<StepBackend> backend_;
};

}  // namespace

void RegisterPipelineScheduler(plugins::PluginRegistry& registry) {
  (void)registry.AddScheduler(std::string(kSchedulerName), "builtin",
                              [&registry](const schedulers::SchedulerContext& context)
                                  -> Result<std::unique_ptr<schedulers::Scheduler>> {
                                return std::unique_ptr<schedulers::Scheduler>(
                                    std::make_unique<PipelineScheduler>(registry, context));
                              });
}

int RunPipelineDriver(plugins::PluginRegistry& registry, const std::string& state_dir, const std::string& id) {
  PipelineStore store((fs::path(state_dir) / "pipelines").string());
  if (!TakeDriverLock(store.dir(), id)) return 0;  // another driver has it
  auto record = store.Get(id);
  if (!record || !*record) {
    std::fprintf(stderr, "torchx-pipeline-driver: pipeline %s: %s\n", id.c_str(),
                 record ? "does not exist" : record.error().message().c_str());
    return 1;
  }
  runner::Runner runner(registry, RunnerOptionsFor((*record)->session, nullptr));
  auto backend = MakeRunnerStepBackend(runner);
  // A step left "submitting" means a driver died between claiming it and recording its handle:
  // it may or may not have been submitted, and submitting it again could run it twice.
  auto resumed = store.Update(id, [](PipelineRecord& r) {
    for (StepRecord& s : r.steps) {
      if (s.phase != StepPhase::kSubmitting) continue;
      s.phase = StepPhase::kDone;
      s.state = specs::AppState::kFailed;
      s.msg = fmt::format("the pipeline's driver stopped while submitting this step; check `torchx list -s {}`",
                          s.scheduler);
    }
    return OkStatus();
  });
  if (!resumed) {
    std::fprintf(stderr, "torchx-pipeline-driver: %s\n", resumed.error().message().c_str());
    return 1;
  }
  int errors = 0;
  while (true) {
    auto r = Advance(store, id, *backend);
    if (!r) {
      if (r.error().code() == StatusCode::kNotFound) return 0;  // deleted
      std::fprintf(stderr, "torchx-pipeline-driver: %s\n", r.error().message().c_str());
      if (++errors > 60) return 1;  // the store has been failing for a minute
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    errors = 0;
    if (r->final_state) return 0;
    std::string active;
    for (const StepRecord& s : r->steps) {
      if (s.phase == StepPhase::kSubmitted) active = s.handle;
    }
    if (active.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    } else {
      backend->WaitForUpdate(active, std::chrono::milliseconds(500));
    }
  }
}

}  // namespace torchx::pipelines
