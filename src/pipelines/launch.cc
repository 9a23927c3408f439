// Planning a pipeline run (every step built and dry-run before anything is submitted) and
// starting it.
#include <chrono>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "composite/children.h"
#include "composite/driver_process.h"
#include "core/spelling.h"
#include "core/state_dir.h"
#include "pipelines/engine.h"
#include "pipelines/pipeline_store.h"
#include "torchx/config/run_cfg.h"
#include "torchx/managed/managed.h"
#include "torchx/pipelines/pipeline.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/app_id.h"
#include "torchx/specs/serialize.h"

namespace torchx::pipelines {
namespace {

namespace fs = std::filesystem;

// Options for one step, through the one precedence (config/run_cfg.h): the step's own `cfg`,
// then, for steps on the default scheduler, `-cfg` and the file's `cfg`, then .torchxconfig's
// [<scheduler>] for what none of them set. A file names options by hand: one the scheduler does
// not have is an error, not a warning.
Result<specs::Cfg> StepCfg(runner::Runner& runner, const config::TorchxConfig& config, const RunRequest& request,
                           const StepSpec& step, const std::string& scheduler, bool on_default) {
  std::string where = "steps." + step.name;
  auto opts = runner.SchedulerRunOpts(scheduler);
  if (!opts) return opts.error().WithContext(where + ".scheduler");
  using Form = config::CfgSource::Form;
  std::vector<config::CfgSource> sources = {{Form::kJsonObject, step.cfg_json, where + ".cfg"}};
  if (on_default) {
    sources.push_back({Form::kString, request.cfg, "-cfg"});
    sources.push_back({Form::kJsonObject, request.spec.cfg_json, "cfg"});
  }
  return config::ResolveRunCfg(scheduler, *opts, sources, config, config::UnknownOptions::kRefuse);
}

std::string PipelinesDir() { return (fs::path(internal::DefaultStateDir()) / "pipelines").string(); }

}  // namespace

Result<Plan> PlanPipeline(runner::Runner& runner, const config::TorchxConfig& config, const RunRequest& request) {
  const PipelineSpec& spec = request.spec;
  Plan plan;
  plan.name = !request.name.empty() ? request.name : !spec.name.empty() ? spec.name : "pipeline";
  plan.id = specs::MakeUnique(specs::NormalizeName(plan.name, 40));
  plan.session = runner.session_name();
  std::string handle = specs::MakeAppHandle(kSchedulerName, plan.session, plan.id);
  std::string default_scheduler = !request.scheduler.empty() ? request.scheduler
                                  : !spec.scheduler.empty()  ? spec.scheduler
                                                             : runner.DefaultScheduler();
  auto scheduler_of = [&](const StepSpec& step) { return step.scheduler.empty() ? default_scheduler : step.scheduler; };
  // Sequenced by the scheduler when every step is on one scheduler that can
  // (Capability::kNativeDependencies); else by the driver. An unknown scheduler is reported below.
  // A managed step is sequenced by the driver: a recovery is a new job, which `afterok` on the
  // first one cannot follow.
  bool native = !spec.steps.empty();
  for (const StepSpec& step : spec.steps) {
    native = native && step.managed_json.empty() && scheduler_of(step) == scheduler_of(spec.steps.front());
  }
  if (native) {
    auto caps = runner.SchedulerCapabilities(scheduler_of(spec.steps.front()));
    native = caps && caps->Has(schedulers::Capability::kNativeDependencies);
  }
  plan.sequenced_by = native ? Sequencer::kScheduler : Sequencer::kDriver;
  for (const StepSpec& step : spec.steps) {
    std::string where = "steps." + step.name;
    PlannedStep p;
    p.name = step.name;
    p.depends_on = step.depends_on;
    p.scheduler = scheduler_of(step);
    if (p.scheduler == kSchedulerName) {
      return InvalidArgumentError(
          fmt::format("{}.scheduler: a step runs on a job scheduler, not `{}`", where, kSchedulerName));
    }
    TORCHX_ASSIGN_OR_RETURN(p.cfg,
                            StepCfg(runner, config, request, step, p.scheduler, p.scheduler == default_scheduler));
    specs::AppDef app;
    if (step.app) {
      app = *step.app;
    } else {
      auto built = runner.ComponentAppDef(step.component, step.args);
      if (!built) return built.error().WithContext(where);
      app = std::move(*built);
    }
    app.name = step.name;  // the step's app is listed under its step's name, not its component's
    for (specs::Role& role : app.roles) {
      role.env["TORCHX_PIPELINE"] = handle;
      role.env["TORCHX_PIPELINE_STEP"] = step.name;
    }
    specs::Cfg dryrun_cfg = p.cfg;
    if (native && !step.depends_on.empty()) {
      // What the scheduler will be asked, with placeholders for the ids the dependencies get once
      // submitted: checked before anything is submitted, and shown by --dryrun. The record keeps
      // p.cfg; the launch asks again with the real ids.
      std::vector<std::string> after;
      for (const std::string& d : step.depends_on) {
        after.push_back(specs::MakeAppHandle(p.scheduler, plan.session, "<" + d + ">"));
      }
      auto with_deps = runner.DependencyCfg(p.scheduler, after, p.cfg);
      if (!with_deps) return with_deps.error().WithContext(where + ".cfg");
      dryrun_cfg = std::move(*with_deps);
    }
    if (!step.managed_json.empty()) {
      // Its failover targets resolved against this .torchxconfig, and the managed job planned
      // (every target dry-run) under the id the driver will submit it as.
      TORCHX_ASSIGN_OR_RETURN(managed::ChildPolicy policy,
                              managed::ParseChildPolicy(step.managed_json, where + ".managed"));
      auto resolved = managed::ResolveChildPolicy(runner, config, std::move(policy));
      if (!resolved) return resolved.error().WithContext(where + ".managed");
      auto info =
          managed::PlanManagedChild(runner, config, *resolved, std::move(app), p.scheduler, p.cfg, plan.id, step.name);
      if (!info) return info.error().WithContext(where);
      p.dryrun = std::move(*info);
      p.managed = true;
      plan.steps.push_back(std::move(p));
      continue;
    }
    auto info = runner.DryRun(app, p.scheduler, dryrun_cfg);
    if (!info) return info.error().WithContext(where);
    p.dryrun = std::move(*info);
    plan.steps.push_back(std::move(p));
  }
  return plan;
}

std::string_view SequencerName(Sequencer s) { return s == Sequencer::kScheduler ? "scheduler" : "driver"; }

std::string RenderPlan(const Plan& plan) {
  std::string how = plan.sequenced_by == Sequencer::kScheduler
                        ? fmt::format("submitted at once to {}, which starts each step once its dependencies succeed",
                                      plan.steps.front().scheduler)
                        : std::string("each step submitted when its dependencies succeed");
  std::string out = fmt::format("=== PIPELINE {} ({}) ===\n", plan.name, how);
  for (const PlannedStep& s : plan.steps) {
    out += fmt::format("\n=== STEP {} on {}{}{} ===\n{}\n", s.name, s.scheduler, s.managed ? " (managed)" : "",
                       s.depends_on.empty() ? "" : fmt::format(", after {}", fmt::join(s.depends_on, ", ")),
                       s.dryrun.request);
  }
  return out;
}

Result<std::string> LaunchPipeline(runner::Runner& runner, const Plan& plan) {
  PipelineStore store(PipelinesDir());
  PipelineRecord record;
  record.id = plan.id;
  record.name = plan.name;
  record.session = plan.session;
  std::error_code ec;
  record.cwd = fs::current_path(ec).string();
  record.created = composite::EpochNow();
  record.sequenced_by = plan.sequenced_by;
  for (const PlannedStep& s : plan.steps) {
    StepRecord step;
    step.name = s.name;
    step.depends_on = s.depends_on;
    step.scheduler = s.scheduler;
    step.app_json = specs::AppDefToJson(s.dryrun.app, -1);  // with the env the runner injects (trackers...)
    step.cfg_json = specs::CfgToJson(s.cfg);
    if (s.managed) step.managed_json = s.dryrun.payload;
    record.steps.push_back(std::move(step));
  }
  std::string handle = specs::MakeAppHandle(kSchedulerName, plan.session, plan.id);

  if (plan.sequenced_by == Sequencer::kScheduler) {
    // The whole DAG at once: the scheduler holds each job until its dependencies succeed, and
    // cancels it when one fails, whether or not this process is still there. This process holds
    // the pipeline's lock while it submits, taken before the record exists: a status or list call
    // that finds the lock free with steps unsubmitted (the launcher was killed mid-launch) marks
    // them not run rather than waiting forever, and must not do so while the launch goes on.
    TORCHX_RETURN_IF_ERROR(store.EnsureDir());
    TORCHX_ASSIGN_OR_RETURN(auto lock, composite::DriverLock::TryTake(store.dir(), plan.id));
    if (!lock) return FailedPreconditionError(fmt::format("pipeline {}: another process holds its lock", plan.id));
    TORCHX_RETURN_IF_ERROR(store.Create(record));
    auto backend = MakeRunnerStepBackend(runner);
    std::map<std::string, std::string> handles;
    for (const StepRecord& step : record.steps) {
      std::vector<std::string> after;
      for (const std::string& d : step.depends_on) after.push_back(handles[d]);
      // Claimed and recorded as the driver does, so a cancel arriving mid-launch is honoured.
      auto submitted = SubmitStep(store, plan.id, step.name, *backend, after);
      const StepRecord* done = submitted && *submitted ? (*submitted)->Step(step.name) : nullptr;
      if (!submitted || (done && done->phase != ChildPhase::kSubmitted)) {
        // The first submission that fails stops the launch: what was submitted is cancelled and
        // the record removed, as if nothing had run.
        for (const auto& [_, h] : handles) (void)backend->Cancel(h);
        (void)store.Remove(plan.id);
        return (submitted ? UnavailableError(done->msg) : submitted.error()).WithContext("steps." + step.name);
      }
      if (!*submitted) break;  // cancelled while launching: the rest is marked not run
      handles[step.name] = done->handle;
    }
    return handle;
  }

  TORCHX_RETURN_IF_ERROR(store.Create(record));
  if (Status s = composite::StartDriver(internal::DefaultStateDir(), store.dir(), plan.id, record.cwd); !s.ok()) {
    (void)store.Remove(plan.id);
    return s;
  }
  return handle;
}

Result<composite::PlannedComposite> PlanLaunch(runner::Runner& runner, const config::TorchxConfig& config,
                                               const composite::LaunchRequest& request) {
  TORCHX_ASSIGN_OR_RETURN(PipelineSpec spec, composite::ParseDocument(request, &ParsePipeline));
  TORCHX_ASSIGN_OR_RETURN(
      Plan plan, PlanPipeline(runner, config, RunRequest{std::move(spec), request.scheduler, request.cfg, ""}));
  std::vector<std::string> where;
  for (const PlannedStep& step : plan.steps) where.push_back(step.scheduler);
  std::string text = RenderPlan(plan);
  return composite::PlannedFrom(std::move(plan), std::move(text), std::move(where), &LaunchPipeline);
}

}  // namespace torchx::pipelines
