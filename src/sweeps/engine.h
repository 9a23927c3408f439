// What moves a sweep forward, over a seam to the trials' scheduler (TrialBackend) so the rules are
// unit-tested with a fake: refresh the trials that run (their states and what they reported),
// stop early after `max_failures` failed trials, submit waiting trials while fewer than
// `max_parallel` run, and end the sweep once every trial has. The driver calls Advance in a loop;
// status calls Refresh (which never submits). The composite contract (docs/architecture.md) is the
// pipelines': a trial claimed but not recorded is failed, never submitted twice.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "composite/child_backend.h"
#include "composite/child_ops.h"
#include "sweeps/metrics.h"
#include "sweeps/sweep_store.h"
#include "torchx/runner/runner.h"
#include "torchx/schedulers/scheduler.h"
#include "torchx/specs/app_state.h"

namespace torchx::sweeps {

/// A trial Ax proposed: Ax's index for it, its values and what generated them. The sweep gives it
/// to its lowest waiting trial without values.
struct Proposal {
  int index = 0;  ///< Ax's trial index
  Assignment values;
  std::string generator;
};

/// A trial built and dry-run, not yet submitted.
using TrialDryRun = composite::ChildPlan;

/// The trials' scheduler, as the sweep needs it: the composite's child seam, plus building a trial,
/// reading its reports and asking Ax.
class TrialBackend : public composite::ChildBackend {
 public:
  /// Builds trial `trial` of `sweep` and dry-runs it: what Schedule submits, and the handle the
  /// dry run chose (recorded with the claim, composite/claims.h).
  virtual Result<TrialDryRun> Plan(const SweepRecord& sweep, const TrialRecord& trial) = 0;
  /// What the trial has reported so far, in order.
  virtual std::vector<Report> Reports(const SweepRecord& sweep, const TrialRecord& trial) = 0;
  /// An ax sweep's next trials, at most `count`, told first which trials ended and with what
  /// objective (Ax may propose fewer while it waits for data). Default: kUnimplemented.
  virtual Result<std::vector<Proposal>> Propose(const SweepRecord& sweep, int count);
};

/// The real one: trials built and submitted through `runner`, reports read from the files.
std::unique_ptr<TrialBackend> MakeRunnerTrialBackend(runner::Runner& runner);

/// The handle of sweep `r`.
std::string SweepHandle(const SweepRecord& r);

/// Trial `t` of `r` as an AppDef, before the runner's dry run: the component built with the
/// trial's values (a swept component parameter passed as `--name value`, placeholders replaced in
/// the arguments), or the inline AppDef with its placeholders replaced; named `<sweep>-<index>`,
/// with TORCHX_SWEEP_ID, TORCHX_TRIAL_INDEX and TORCHX_SWEEP_RESULTS in every role's env.
Result<specs::AppDef> BuildTrialApp(runner::Runner& runner, const SweepRecord& r, const TrialRecord& t);
/// What a trial reports to: the launch's trackers plus the sweep's fsspec tracker, its parent run
/// the sweep.
specs::Tracking TrialTracking(const SweepRecord& r);
/// The fsspec tracker config file of sweep `r` (written at launch).
std::string TrackerConfigPath(const SweepRecord& r);
/// An ax sweep's Ax state (its experiment and generation strategy as Ax saves them).
std::string AxStatePath(const SweepRecord& r);

/// Records the states and reports of submitted trials, stops the sweep after `max_failures`
/// failures, and sets the final state once every trial is final. Never submits.
Result<SweepRecord> Refresh(SweepStore& store, const std::string& id, TrialBackend& backend);

/// Refresh, then submits waiting trials (index order) while fewer than `max_parallel` run; an ax
/// sweep's trials get their values from TrialBackend::Propose first.
Result<SweepRecord> Advance(SweepStore& store, const std::string& id, TrialBackend& backend);

/// The trials left `submitting` by a driver that died between claiming and recording them,
/// resolved by their planned handles (composite::ResolveClaim): adopted where their scheduler has
/// them, claimed again where it never had them, failed with `why_unknown` where it cannot tell.
Status ResolveClaims(SweepStore& store, const std::string& id, TrialBackend& backend, const std::string& why_unknown);

/// Fails the trials left `submitting` whose handles this driver could not record (it cancelled them).
void FailUnrecorded(SweepRecord& r, const std::string& why);

/// Marks every waiting trial not run (`why`).
void AbandonWaiting(SweepRecord& r, const std::string& why);

/// Asks for cancellation: waiting trials are marked not run, submitted ones cancelled. Idempotent.
::torchx::Status CancelSweep(SweepStore& store, const std::string& id, TrialBackend& backend);

/// The state a sweep reports (its final state once it has one).
specs::AppState LiveState(const SweepRecord& r);

/// A trial as a member of its sweep (named by its index), from the record.
schedulers::MemberApp TrialMember(const SweepRecord& r, const TrialRecord& t);

/// The sweep as an app: a role per trial (named by its index; `index.role` for a trial app with
/// several roles) with the trial's replicas as its scheduler reports them.
schedulers::DescribeAppResponse DescribeSweep(const SweepRecord& r, TrialBackend& backend);

/// Which trial and role a sweep role name (`index` or `index.role`) stands for.
struct TrialRole {
  const TrialRecord* trial = nullptr;
  std::string role;
};
Result<TrialRole> FindTrialRole(const SweepRecord& r, const std::string& role);

/// The best trial with an objective value (succeeded trials first), if any.
const TrialRecord* BestTrial(const SweepRecord& r);

/// Why the objective has no value yet, once trials report: "objective `los` not reported; did you
/// mean `loss`?" (or the metrics they do report). nullopt without an objective, once a trial has
/// a value for it, or while no trial has reported anything (unless `ended`: then a sweep whose
/// trials never reported it says so too). A typo'd objective shows from the first report on
/// (`sweep status`, the dashboard) instead of after the whole sweep ran without a best trial.
std::optional<std::string> UnreportedObjective(const SweepRecord& r, bool ended);

}  // namespace torchx::sweeps
