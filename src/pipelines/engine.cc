#include "pipelines/engine.h"

#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>

#include "composite/child_ops.h"
#include "composite/children.h"
#include "torchx/managed/managed.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/serialize.h"

namespace torchx::pipelines {
namespace {

using specs::AppState;

// The first dependency that did not succeed, if any.
const StepRecord* FailedDependency(const PipelineRecord& r, const StepRecord& s) {
  for (const std::string& d : s.depends_on) {
    for (const StepRecord& o : r.steps) {
      if (o.name == d && composite::IsFinal(o.phase) && o.state != AppState::kSucceeded) return &o;
    }
  }
  return nullptr;
}

bool DependenciesSucceeded(const PipelineRecord& r, const StepRecord& s) {
  for (const std::string& d : s.depends_on) {
    for (const StepRecord& o : r.steps) {
      if (o.name == d && !(o.phase == ChildPhase::kDone && o.state == AppState::kSucceeded)) return false;
    }
  }
  return true;
}

std::string NotRunMessage(const StepRecord& dep) {
  if (dep.phase == ChildPhase::kSkipped) return fmt::format("not run: step `{}` did not run", dep.name);
  return fmt::format("not run: step `{}` {}", dep.name, specs::AppStateName(dep.state));
}

// Sets the final state once every step is final.
void Finish(PipelineRecord& r) {
  if (r.final_state) return;
  for (const StepRecord& s : r.steps) {
    if (!composite::IsFinal(s.phase)) return;
  }
  std::vector<std::string> failed;
  for (const StepRecord& s : r.steps) {
    if (s.phase == ChildPhase::kDone && s.state != AppState::kSucceeded &&
        !(r.cancel_requested && s.state == AppState::kCancelled)) {
      failed.push_back(s.name);
    }
  }
  std::vector<std::string> not_run;
  for (const StepRecord& s : r.steps) {
    if (s.phase == ChildPhase::kSkipped) not_run.push_back(s.name);
  }
  if (!failed.empty()) {
    r.final_state = AppState::kFailed;
    r.msg = fmt::format("step{} {} did not succeed", failed.size() > 1 ? "s" : "", fmt::join(failed, ", "));
  } else if (!not_run.empty() && !r.cancel_requested) {
    // Nothing failed, yet steps never ran (nothing was left to submit them): not a success.
    r.final_state = AppState::kFailed;
    r.msg = fmt::format("step{} {} did not run", not_run.size() > 1 ? "s" : "", fmt::join(not_run, ", "));
  } else if (r.cancel_requested) {
    r.final_state = AppState::kCancelled;
    r.msg = "cancelled";
  } else {
    r.final_state = AppState::kSucceeded;
    r.msg = "";
  }
}

// Applies what the steps' schedulers say to the record (under the store's lock).
void ApplyStatuses(PipelineRecord& r, const std::map<std::string, Result<std::optional<specs::AppStatus>>>& seen) {
  double now = composite::EpochNow();
  for (size_t i = 0; i < r.steps.size(); ++i) {
    auto it = seen.find(r.steps[i].name);
    if (it != seen.end()) composite::ApplyChildStatus(r.steps.Mut(i), it->second, now);
  }
  // Dependents of a step that did not succeed never run. (A scheduler that sequences the steps
  // cancels them itself: a CANCELLED step with a failed dependency is marked not run the same way.)
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = 0; i < r.steps.size(); ++i) {
      const StepRecord* dep = FailedDependency(r, r.steps[i]);
      if (!dep) continue;
      const StepRecord& was = r.steps[i];
      bool waiting = was.phase == ChildPhase::kWaiting;
      bool killed_by_scheduler = was.phase == ChildPhase::kDone && was.state == AppState::kCancelled &&
                                 r.sequenced_by == Sequencer::kScheduler;
      if (waiting || killed_by_scheduler) {
        std::string why = NotRunMessage(*dep);
        StepRecord& s = r.steps.Mut(i);
        s.phase = ChildPhase::kSkipped;
        s.state = AppState::kCancelled;
        s.msg = std::move(why);
        changed = true;
      }
    }
  }
  for (size_t i = 0; i < r.steps.size(); ++i) {  // what ran is timed; a step that never ran has no end
    const StepRecord& s = r.steps[i];
    if (s.phase == ChildPhase::kDone && s.submitted && !s.ended) r.steps.Mut(i).ended = now;
  }
  Finish(r);
}

// After a change to the steps: dependents of a step that did not succeed marked not run, the
// pipeline's end once every step is final.
void Settle(PipelineRecord& r) { ApplyStatuses(r, {}); }

class RunnerStepBackend final : public composite::OverRunner<StepBackend> {
 public:
  using OverRunner::OverRunner;

  Result<StepDryRun> Plan(const StepRecord& step, const std::vector<std::string>& after) override {
    if (!step.managed_json.empty()) {  // the managed job the launch planned, under its id
      StepDryRun out;
      TORCHX_ASSIGN_OR_RETURN(out.info, managed::ManagedChildDryRun(step.managed_json));
      out.planned = composite::PlanClaim(out.info, runner().session_name());
      return out;
    }
    auto resources = runner().build_context().named_resources;
    TORCHX_ASSIGN_OR_RETURN(specs::AppDef app, specs::AppDefFromJson(step.app_json, resources));
    TORCHX_ASSIGN_OR_RETURN(specs::RunOpts opts, runner().SchedulerRunOpts(step.scheduler));
    TORCHX_ASSIGN_OR_RETURN(specs::Cfg cfg, opts.CfgFromJson(step.cfg_json));
    if (!after.empty()) {
      TORCHX_ASSIGN_OR_RETURN(cfg, runner().DependencyCfg(step.scheduler, after, std::move(cfg)));
    }
    StepDryRun out;
    TORCHX_ASSIGN_OR_RETURN(out.info, runner().DryRun(std::move(app), step.scheduler, cfg));
    out.planned = composite::PlanClaim(out.info, runner().session_name());
    return out;
  }
};

}  // namespace

std::unique_ptr<StepBackend> MakeRunnerStepBackend(runner::Runner& runner) {
  return std::make_unique<RunnerStepBackend>(runner);
}

Result<PipelineRecord> Refresh(PipelineStore& store, const std::string& id, StepBackend& backend) {
  TORCHX_ASSIGN_OR_RETURN(auto current, store.Get(id));
  if (!current) return NotFoundError(fmt::format("pipeline {} does not exist", id));
  if (current->final_state) return std::move(*current);
  // Ask the schedulers outside the lock (they may take seconds), then apply under it.
  // Every running step's status in one call (a scheduler that answers many at once is asked once).
  std::vector<std::string> names, handles;
  for (const StepRecord& s : current->steps) {
    if (s.phase != ChildPhase::kSubmitted) continue;
    names.push_back(s.name);
    handles.push_back(s.handle);
  }
  std::vector<composite::ChildStatus> statuses = backend.Statuses(handles);
  std::map<std::string, Result<std::optional<specs::AppStatus>>> seen;
  for (size_t i = 0; i < names.size() && i < statuses.size(); ++i) seen.emplace(names[i], std::move(statuses[i]));
  return store.Update(id, [&](PipelineRecord& r) {
    ApplyStatuses(r, seen);
    return OkStatus();
  });
}

Result<std::optional<PipelineRecord>> SubmitStep(PipelineStore& store, const std::string& id, const std::string& name,
                                                 StepBackend& backend, const std::vector<std::string>& after) {
  // Built and dry-run first, so that the claim records the handle the dry run chose: a driver
  // that dies before it records the step's handle leaves the next one a way to find the step.
  TORCHX_ASSIGN_OR_RETURN(auto before, store.Get(id));
  if (!before) return NotFoundError(fmt::format("pipeline {} does not exist", id));
  const StepRecord* waiting = before->Step(name);
  if (before->cancel_requested || !waiting || waiting->phase != ChildPhase::kWaiting) {
    return std::optional<PipelineRecord>();
  }
  size_t at = before->StepIndex(name);
  std::map<size_t, Result<composite::ChildPlan>> plans;
  plans.emplace(at, backend.Plan(*waiting, after));
  // Claimed under the lock, so a cancel arriving now either sees the step as waiting (and marks
  // it not run, and we do not submit) or sees it submitting (and we cancel it once recorded).
  auto waiting_step = [](const PipelineRecord&, const StepRecord& s) { return s.phase == ChildPhase::kWaiting; };
  PipelineRecord claimed_in;
  TORCHX_ASSIGN_OR_RETURN(auto claimed, composite::ClaimChildren(store, id, &PipelineRecord::steps, std::move(plans),
                                                                 waiting_step, Settle, claimed_in));
  if (claimed.empty()) {  // not claimed (cancelled, or no longer waiting), or its dry run failed
    const StepRecord* s = claimed_in.Step(name);
    if (s && s->phase == ChildPhase::kDone) return std::optional(std::move(claimed_in));
    return std::optional<PipelineRecord>();
  }
  TORCHX_ASSIGN_OR_RETURN(PipelineRecord recorded,
                          composite::SubmitClaimed(store, id, backend, &PipelineRecord::steps, claimed, Settle));
  return std::optional(std::move(recorded));
}

Status ResolveClaims(PipelineStore& store, const std::string& id, StepBackend& backend,
                     const std::function<std::string(const StepRecord&)>& why_unknown) {
  return composite::ResolveClaimsIn(store, id, backend, &PipelineRecord::steps, why_unknown, Settle);
}

void FailUnrecorded(PipelineRecord& r, const std::string& why) {
  FailUnrecorded(r, [&why](const StepRecord&) { return why; });
}

void FailUnrecorded(PipelineRecord& r, const std::function<std::string(const StepRecord&)>& why) {
  composite::FailClaimed(r.steps, why);
  Settle(r);
}

void AbandonWaiting(PipelineRecord& r, const std::string& why) {
  composite::SkipWaiting(r.steps, why);
  Settle(r);
}

Result<PipelineRecord> Advance(PipelineStore& store, const std::string& id, StepBackend& backend) {
  TORCHX_ASSIGN_OR_RETURN(PipelineRecord r, Refresh(store, id, backend));
  std::vector<std::string> ready;
  for (const StepRecord& s : r.steps) {
    if (s.phase == ChildPhase::kWaiting && DependenciesSucceeded(r, s)) ready.push_back(s.name);
  }
  for (const std::string& name : ready) {
    if (r.final_state || r.cancel_requested) break;
    TORCHX_ASSIGN_OR_RETURN(auto submitted, SubmitStep(store, id, name, backend, {}));
    if (submitted) r = std::move(*submitted);
  }
  return r;
}

::torchx::Status CancelPipeline(PipelineStore& store, const std::string& id, StepBackend& backend) {
  return composite::CancelComposite(store, id, backend, &PipelineRecord::steps, "the pipeline was cancelled", Finish);
}

specs::AppState LiveState(const PipelineRecord& r) { return composite::LiveStateOf(r, r.steps); }

namespace {

std::vector<specs::Role> StepRoles(const StepRecord& s) {
  auto app = specs::AppDefFromJson(s.app_json);
  if (!app) return {};
  return app->roles;
}

std::string PipelineRoleName(const StepRecord& s, const std::string& role, size_t num_roles) {
  return num_roles == 1 ? s.name : s.name + "." + role;
}

}  // namespace

schedulers::MemberApp StepMember(const StepRecord& s) {
  schedulers::MemberApp m = composite::MemberOf(s, s.name, s.scheduler, s.cfg_json);
  m.depends_on = s.depends_on;
  if (s.phase == ChildPhase::kWaiting && !s.depends_on.empty()) {
    m.msg = fmt::format("waiting for {}", fmt::join(s.depends_on, ", "));
  } else if (s.phase != ChildPhase::kSubmitted) {
    m.msg = s.msg;
  }
  return m;
}

specs::AppDef PipelineAppDef(const PipelineRecord& r) {
  specs::AppDef app;
  app.name = r.name;
  for (const StepRecord& s : r.steps) {
    std::vector<specs::Role> roles = StepRoles(s);
    for (specs::Role role : roles) {
      role.name = PipelineRoleName(s, role.name, roles.size());
      app.roles.push_back(std::move(role));
    }
  }
  return app;
}

Result<StepRole> FindStepRole(const PipelineRecord& r, const std::string& role) {
  std::vector<std::string> names;
  for (const StepRecord& s : r.steps) {
    std::vector<specs::Role> roles = StepRoles(s);
    for (const specs::Role& sr : roles) {
      std::string n = PipelineRoleName(s, sr.name, roles.size());
      if (n == role) return StepRole{&s, sr.name};
      names.push_back(n);
    }
  }
  return NotFoundError(fmt::format("pipeline {}: no step role `{}`; roles: {}", r.id, role, fmt::join(names, ", ")));
}

schedulers::DescribeAppResponse DescribePipeline(const PipelineRecord& r, StepBackend& backend) {
  schedulers::DescribeAppResponse d;
  d.app_id = r.id;
  d.state = LiveState(r);
  d.app = PipelineAppDef(r);
  std::vector<std::string> lines;
  for (const StepRecord& s : r.steps) {
    auto step_app = specs::AppDefFromJson(s.app_json);  // parsed once: its roles, and the member's AppDef
    std::vector<specs::Role> roles = step_app ? step_app->roles : std::vector<specs::Role>{};
    std::optional<specs::AppStatus> live;
    if (!s.handle.empty()) {
      auto st = backend.Status(s.handle);
      if (st && *st) live = std::move(**st);
    }
    AppState state = s.state;
    if (live && s.phase == ChildPhase::kSubmitted) state = live->state;
    if (live) d.num_restarts += live->num_restarts;
    for (const specs::Role& role : roles) {
      specs::RoleStatus rs;
      rs.role = PipelineRoleName(s, role.name, roles.size());
      const specs::RoleStatus* from = nullptr;
      if (live) {
        for (const auto& lr : live->roles) {
          if (lr.role == role.name) from = &lr;
        }
      }
      if (from) {
        rs.replicas = from->replicas;
        for (auto& rep : rs.replicas) rep.role = rs.role;
      } else {
        for (int i = 0; i < role.num_replicas; ++i) {
          specs::ReplicaStatus rep;
          rep.id = i;
          rep.role = rs.role;
          rep.state = state;
          rs.replicas.push_back(std::move(rep));
        }
      }
      d.roles_statuses.push_back(std::move(rs));
    }
    std::string line = fmt::format("{} {}", s.name, specs::AppStateName(state));
    if (s.phase == ChildPhase::kWaiting || s.phase == ChildPhase::kSubmitting) {
      line = s.depends_on.empty() || s.phase == ChildPhase::kSubmitting
                 ? fmt::format("{} being submitted", s.name)
                 : fmt::format("{} waiting for {}", s.name, fmt::join(s.depends_on, ", "));
    } else if (s.phase == ChildPhase::kSkipped) {
      line = fmt::format("{} {}", s.name, s.msg);
      if (!s.handle.empty()) line += fmt::format(" ({})", s.handle);  // its scheduler cancelled it
    } else if (!s.handle.empty()) {
      line += " " + s.handle;
    }
    if (s.phase == ChildPhase::kDone && !s.msg.empty()) line += ": " + s.msg;
    lines.push_back(std::move(line));
    schedulers::MemberApp m = StepMember(s);
    m.state = state;
    if (step_app) m.app = std::move(*step_app);
    d.members.push_back(std::move(m));
  }
  d.msg = fmt::format("{}", fmt::join(lines, "; "));
  if (r.final_state && !r.msg.empty()) d.msg = r.msg + " (" + d.msg + ")";
  return d;
}

}  // namespace torchx::pipelines
