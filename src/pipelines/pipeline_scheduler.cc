// The "pipeline" scheduler: pipeline handles answer status / wait / log / cancel / list /
// describe / delete like any app's, from the pipeline's record and its steps' schedulers. And the
// body of torchx-composite-driver, which moves a pipeline forward until it ends.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "composite/children.h"
#include "composite/deferred_log.h"
#include "composite/driver_loop.h"
#include "composite/driver_process.h"
#include "core/state_dir.h"
#include "pipelines/engine.h"
#include "pipelines/pipeline_store.h"
#include "torchx/pipelines/pipeline.h"

namespace torchx::pipelines {
namespace {

namespace fs = std::filesystem;
using schedulers::DescribeAppResponse;
using schedulers::DryRunInfo;
using schedulers::ListAppResponse;

// The record, brought up to date, and moving again if nothing moves it:
// - a driver (or, sequenced by the scheduler, the launcher) holds the lock: the record as it is;
// - sequenced by the scheduler: refreshed from it; steps a launcher killed mid-launch left
//   unsubmitted are marked not run;
// - otherwise the driver died (a reboot, kill -9) before the pipeline ended: a new one is started,
//   which goes on from the record; if none can start, what is left is marked not run and the
//   pipeline ends once its running steps have.
Result<std::optional<PipelineRecord>> CurrentRecord(PipelineStore& store, const std::string& state_dir,
                                                    const std::string& id, StepBackend& backend) {
  TORCHX_ASSIGN_OR_RETURN(auto record, store.Get(id));
  if (!record || record->final_state || composite::DriverRunning(store.dir(), id)) return record;
  std::string stuck;
  if (record->sequenced_by == Sequencer::kDriver) {
    Status started = composite::StartDriver(state_dir, store.dir(), id, record->cwd);
    if (started.ok()) return record;
    stuck = "the pipeline's driver cannot start: " + started.message();
  }
  auto abandoned = store.Update(id, [&](PipelineRecord& cur) {
    if (cur.final_state) return OkStatus();
    if (cur.sequenced_by == Sequencer::kScheduler) {
      FailUnrecorded(cur, [](const StepRecord& s) {
        return fmt::format("the launch stopped while submitting this step; check `torchx list -s {}`", s.scheduler);
      });
      AbandonWaiting(cur, "the launch stopped before submitting it");
    } else {
      AbandonWaiting(cur, stuck);
    }
    return OkStatus();
  });
  if (!abandoned) return abandoned.error();
  TORCHX_ASSIGN_OR_RETURN(PipelineRecord r, Refresh(store, id, backend));
  return std::optional(std::move(r));
}

class PipelineScheduler : public schedulers::Scheduler {
 public:
  PipelineScheduler(plugins::PluginRegistry& registry, const schedulers::SchedulerContext& context)
      : Scheduler(std::string(kSchedulerName), context.session_name),
        registry_(registry),
        clock_(context.clock),
        state_dir_(internal::DefaultStateDir()),
        store_((fs::path(state_dir_) / "pipelines").string()),
        runner_(registry, composite::ChildRunnerOptions(context.session_name, context.clock)),
        backend_(MakeRunnerStepBackend(runner_)) {}

  specs::RunOpts run_opts() const override { return {}; }
  // Its state is in its engine (or on disk): a thread may have an instance of its own.
  bool instance_per_thread() const override { return true; }
  schedulers::Capabilities capabilities() const override {
    using schedulers::Capability;
    return {Capability::kLogs, Capability::kFollowLogs, Capability::kList, Capability::kDelete, Capability::kComposite};
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
      if (r.final_state) {
        for (const StepRecord& s : r.steps) {
          if (s.ended) l.ended = std::max(l.ended.value_or(r.created), *s.ended);
        }
        if (*r.final_state != specs::AppState::kSucceeded) l.reason = r.msg;
      }
      for (const StepRecord& s : r.steps) l.members.push_back(StepMember(s));
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
    std::vector<composite::LabelledChild> children;
    for (const StepRecord& s : record->steps) children.push_back({"steps." + s.name, s.handle});
    TORCHX_RETURN_IF_ERROR(
        composite::DeleteChildren(children, [&](const std::string& h) { return runner_.Delete(h); }));
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
    if (!options.follow) return schedulers::MakeLinesIterator({});
    auto look = [state_dir = state_dir_, id = app_id, step = found.step->name,
                 role = found.role](runner::Runner& runner) -> Result<composite::ChildLook> {
      PipelineStore store((fs::path(state_dir) / "pipelines").string());
      auto backend = MakeRunnerStepBackend(runner);
      TORCHX_ASSIGN_OR_RETURN(auto record, CurrentRecord(store, state_dir, id, *backend));
      const StepRecord* s = record ? record->Step(step) : nullptr;
      composite::ChildLook found_now{s ? s->handle : "", role, false};
      found_now.never = !s || s->phase == StepPhase::kSkipped || s->phase == StepPhase::kDone || record->final_state;
      return found_now;
    };
    return composite::MakeDeferredChildLog(registry_, session_name(), clock_, step_options, std::move(look));
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

  Result<std::optional<PipelineRecord>> Current(const std::string& id) {
    return CurrentRecord(store_, state_dir_, id, *backend_);
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
  (void)registry.AddCompositeScheduler(
      std::string(kSchedulerName), "builtin",
      [&registry](const schedulers::SchedulerContext& context) -> Result<std::unique_ptr<schedulers::Scheduler>> {
        return std::unique_ptr<schedulers::Scheduler>(std::make_unique<PipelineScheduler>(registry, context));
      });
}

namespace {

// A pipeline's turn of the driver loop: advance (refresh the steps, submit those whose
// dependencies succeeded), and wait on the last running step.
class PipelineTurns final : public composite::TurnsOver<PipelineStore, StepBackend> {
 public:
  PipelineTurns(PipelineStore& store, std::string id, StepBackend& backend,
                std::function<std::string(const StepRecord&)> why_unknown)
      : TurnsOver(store, std::move(id), backend), why_unknown_(std::move(why_unknown)) {}

  Result<composite::TurnResult> Turn() override {
    TORCHX_ASSIGN_OR_RETURN(PipelineRecord r, Advance(store_, id_, backend_));
    if (r.final_state) return composite::TurnResult{true, std::nullopt};
    // Steps still claimed after a turn (none of this driver's is in flight between turns): a dead
    // driver's claims waiting for a start that may still be recorded. Resolved as at the start.
    if (std::any_of(r.steps.begin(), r.steps.end(),
                    [](const StepRecord& s) { return s.phase == StepPhase::kSubmitting; })) {
      TORCHX_RETURN_IF_ERROR(ResolveClaims(store_, id_, backend_, why_unknown_));
      return composite::TurnResult{};
    }
    // Once per driver, when it first sees a cancel: cancel every step still running, in case the
    // canceller's own cancel of a step failed or missed one recorded while it ran (idempotent).
    if (r.cancel_requested && !swept_) {
      swept_ = true;
      for (const StepRecord& s : r.steps) {
        if (s.phase == StepPhase::kSubmitted) (void)backend_.Cancel(s.handle);
      }
    }
    composite::TurnResult out;
    for (const StepRecord& s : r.steps) {
      if (s.phase == StepPhase::kSubmitted) out.wait_on = s.handle;
    }
    return out;
  }

 private:
  std::function<std::string(const StepRecord&)> why_unknown_;
  bool swept_ = false;
};

}  // namespace

int RunPipelineDriver(plugins::PluginRegistry& registry, const std::string& state_dir, const std::string& id,
                      int ready_fd) {
  PipelineStore store((fs::path(state_dir) / "pipelines").string());
  composite::DriverStart start("pipeline", id, ready_fd);
  auto lock = start.TakeLock(store.dir());
  if (!lock) return start.exit_code();
  auto record = store.Get(id);
  if (!record) return start.Fail(record.error().message());
  if (!*record) return start.Fail("does not exist");
  runner::Runner runner(registry, composite::ChildRunnerOptions((*record)->session, nullptr));
  auto backend = MakeRunnerStepBackend(runner);
  // A step left "submitting": a driver died between claiming it and recording its handle. Its
  // planned handle tells whether it was submitted (adopted), was not (claimed again), or cannot
  // tell (failed: submitting it again could run it twice).
  auto why_unknown = [](const StepRecord& s) {
    return fmt::format(
        "the pipeline's driver stopped while submitting this step, and {} cannot tell whether it was: not "
        "submitted again; check `torchx list -s {}`",
        s.scheduler, s.scheduler);
  };
  Status resumed = ResolveClaims(store, id, *backend, why_unknown);
  if (!resumed.ok()) return start.Fail(resumed.message());
  start.Ready();
  PipelineTurns turns(store, id, *backend, why_unknown);
  SystemClock clock;
  return composite::RunDriverLoop(turns, clock, "torchx-composite-driver");
}

}  // namespace torchx::pipelines
