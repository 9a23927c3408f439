// What every composite (pipelines, sweeps) does with its children the same way: the Runner
// options it reaches them with, and the cancel of the ones submitted.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "torchx/clock.h"
#include "torchx/runner/runner.h"
#include "torchx/status.h"

namespace torchx::pipelines {

/// A Runner's options for a composite's children: the composite's session, and `clock` (null:
/// the system's).
runner::RunnerOptions ChildRunnerOptions(const std::string& session, std::shared_ptr<const Clock> clock);

/// Cancels every handle through `cancel`, all of them even when one fails; the first failure,
/// naming its handle.
Status CancelChildren(const std::vector<std::string>& handles, const std::function<Status(const std::string&)>& cancel);

}  // namespace torchx::pipelines
