// What moves a pipeline forward, over a seam to the steps' schedulers (StepBackend) so the rules
// are unit-tested with a fake: refresh the steps that run, mark the dependents of a failed step
// not run, submit the steps whose dependencies succeeded, and end the pipeline once every step
// has. The driver calls Advance in a loop; status calls Refresh (which never submits).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "composite/child_backend.h"
#include "composite/child_ops.h"
#include "pipelines/pipeline_store.h"
#include "torchx/runner/runner.h"
#include "torchx/schedulers/scheduler.h"
#include "torchx/specs/app_state.h"

namespace torchx::pipelines {

/// A step built and dry-run, not yet submitted.
using StepDryRun = composite::ChildPlan;

/// The steps' schedulers, as the pipeline needs them: the composite's child seam, plus building a step.
class StepBackend : public composite::ChildBackend {
 public:
  /// Builds a recorded step and dry-runs it; `after`: handles of jobs on the step's scheduler that
  /// it must wait for (Runner::DependencyCfg), empty when the pipeline itself waits. Returns what
  /// Schedule submits, with the handle the dry run chose (recorded with the claim).
  virtual Result<StepDryRun> Plan(const StepRecord& step, const std::vector<std::string>& after) = 0;
};

/// The real one: each call through `runner`.
std::unique_ptr<StepBackend> MakeRunnerStepBackend(runner::Runner& runner);

/// Records the states of submitted steps that have ended, marks steps whose dependencies failed
/// (or were cancelled) as not run, and sets the pipeline's final state once every step is
/// final. Never submits. Returns the record as written.
Result<PipelineRecord> Refresh(PipelineStore& store, const std::string& id, StepBackend& backend);

/// Refresh, then submits every step whose dependencies all succeeded (unless cancel was
/// requested). Returns the record as written.
Result<PipelineRecord> Advance(PipelineStore& store, const std::string& id, StepBackend& backend);

/// Claims waiting step `name` (unless cancel was requested or it is not waiting), submits it
/// (`after`: the jobs its scheduler makes it wait for) and records its handle; a cancel that arrived while it
/// was being submitted cancels it at once. nullopt when it could not be claimed. When the handle
/// cannot be recorded the job is cancelled and the step failed.
Result<std::optional<PipelineRecord>> SubmitStep(PipelineStore& store, const std::string& id, const std::string& name,
                                                 StepBackend& backend, const std::vector<std::string>& after);

/// The steps left `submitting` by a driver that died between claiming and recording them,
/// resolved by their planned handles (composite::ResolveClaim): adopted where their scheduler has
/// them, claimed again where it never had them (once the claim has settled), failed with
/// `why_unknown` where it cannot tell.
Status ResolveClaims(PipelineStore& store, const std::string& id, StepBackend& backend,
                     const std::function<std::string(const StepRecord&)>& why_unknown);

/// Fails the steps left `submitting` (whoever claimed them died, or could not record the
/// handle): they may or may not have been submitted, and submitting again could run them twice.
void FailUnrecorded(PipelineRecord& record, const std::string& why);
/// The same, with a reason made for each step.
void FailUnrecorded(PipelineRecord& record, const std::function<std::string(const StepRecord&)>& why);

/// Marks every waiting step not run (`why`), e.g. when nothing is left to submit it.
void AbandonWaiting(PipelineRecord& record, const std::string& why);

/// Asks for cancellation: steps not yet submitted are marked not run, submitted ones are
/// cancelled through their schedulers. Idempotent.
::torchx::Status CancelPipeline(PipelineStore& store, const std::string& id, StepBackend& backend);

/// The pipeline as an app: its state, a line per step in `msg`, and a role per step (named
/// after the step; `step.role` when the step's app has several roles) with the step's replicas
/// as its scheduler reports them.
schedulers::DescribeAppResponse DescribePipeline(const PipelineRecord& record, StepBackend& backend);

/// The synthesized AppDef DescribePipeline reports: the steps' roles, renamed as above.
specs::AppDef PipelineAppDef(const PipelineRecord& record);

/// A step as a member of its pipeline (MemberApp), from the record: its last known state, no
/// AppDef (DescribePipeline adds the live state and the AppDef).
schedulers::MemberApp StepMember(const StepRecord& step);

/// Which step and role a pipeline role name (`step` or `step.role`) stands for.
struct StepRole {
  const StepRecord* step = nullptr;
  std::string role;
};
Result<StepRole> FindStepRole(const PipelineRecord& record, const std::string& role);

/// The state a pipeline that has not ended reports (from its steps' recorded states).
specs::AppState LiveState(const PipelineRecord& record);

}  // namespace torchx::pipelines
