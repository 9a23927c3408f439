// What every composite (pipelines, sweeps, managed jobs) does with its children the same way: the Runner
// options it reaches them with, the cancel of the ones submitted, and their deletion.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "torchx/clock.h"
#include "torchx/runner/runner.h"
#include "torchx/status.h"

namespace torchx::composite {

/// Seconds since the epoch (the wall clock): the times a composite's record holds.
double EpochNow();

/// A Runner's options for a composite's children: the composite's session, and `clock` (null:
/// the system's).
runner::RunnerOptions ChildRunnerOptions(const std::string& session, std::shared_ptr<const Clock> clock);

/// One child of a composite: what errors call it ("steps.train", "trial 3", "attempt 1") and its
/// handle ("" while it has none).
struct LabelledChild {
  std::string label;
  std::string handle;
};

/// Deletes every child's app through `del`, as deleting the composite deletes its children's
/// records where their schedulers keep any: a child its scheduler no longer knows, or whose
/// scheduler cannot delete, is passed over. Stops at the first other failure, naming the child.
Status DeleteChildren(const std::vector<LabelledChild>& children, const std::function<Status(const std::string&)>& del);

/// Cancels every handle through `cancel`, all of them even when one fails; the first failure,
/// naming its handle.
Status CancelChildren(const std::vector<std::string>& handles, const std::function<Status(const std::string&)>& cancel);

}  // namespace torchx::composite
