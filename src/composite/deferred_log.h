// The log of a composite's child that had not been submitted when it was asked for, followed: the
// child's own lines once its composite's driver submits it, none if it never runs. Pipelines'
// steps and sweeps' trials both read their children this way.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "torchx/clock.h"
#include "torchx/plugins/registry.h"
#include "torchx/runner/runner.h"
#include "torchx/schedulers/scheduler.h"

namespace torchx::composite {

/// What a look at the composite's record found of the child.
struct ChildLook {
  std::string handle;  ///< set once submitted
  std::string role;    ///< the child app's role to read (with the handle)
  bool never = false;  ///< the child will not run (skipped, failed to submit, the composite ended)
};

/// `look` is asked every half second (through the composite's record, so a dead driver is
/// restarted rather than waited on) until the child has a handle or never will. Its lines are read
/// through a Runner of its own over `registry`, with `options` (role replaced by the look's).
std::unique_ptr<schedulers::LogIterator> MakeDeferredChildLog(plugins::PluginRegistry& registry,
                                                              const std::string& session,
                                                              std::shared_ptr<const Clock> clock,
                                                              schedulers::LogOptions options,
                                                              std::function<Result<ChildLook>(runner::Runner&)> look);

}  // namespace torchx::composite
