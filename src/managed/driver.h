// What the managed driver does each turn, over a seam to the attempts' schedulers (a Runner in
// production, a fake in tests): look at the current attempt, apply the policy's decision (submit,
// cancel, finish) and record it. Runs in the detached torchx-composite-driver (... managed), and in
// any process that reads a record no driver moves.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "composite/child_backend.h"
#include "managed/record.h"
#include "torchx/runner/runner.h"
#include "torchx/schedulers/scheduler.h"

namespace torchx::managed {

/// The attempts' schedulers: the composite's child seam, plus an attempt's dry run.
class AttemptBackend : public composite::ChildBackend {
 public:
  /// The attempt's request; `cfg_json` is the target's recorded options.
  virtual Result<schedulers::DryRunInfo> DryRun(specs::AppDef app, const std::string& scheduler,
                                                const std::string& cfg_json) = 0;
};

/// The seam over a Runner (which must outlive it).
std::unique_ptr<AttemptBackend> MakeRunnerAttemptBackend(runner::Runner& runner);

/// A driver starting on a record: an attempt left `submitting` by a driver that died is looked
/// up by the id its dry run chose: adopted if its scheduler has it, else marked never submitted
/// (to be submitted again) where that scheduler submits under the id its dry run chose (it says
/// so: DryRunInfo::app_id_is_final, or an earlier attempt showed it).
/// Otherwise (it picks ids only at submission, or has not shown it keeps them) it cannot tell: the
/// run ends FAILED saying so, rather than risk running the app twice.
::torchx::Status ResumeSubmitting(ManagedStore& store, const std::string& id, AttemptBackend& backend, double now);

/// One turn: Observe the current attempt, Decide, act, record. Returns the record after.
Result<ManagedRecord> Turn(ManagedStore& store, const std::string& id, AttemptBackend& backend, double now);

}  // namespace torchx::managed
