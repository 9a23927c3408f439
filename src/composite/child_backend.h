// The one seam between a composite and its children's schedulers, for every kind: submit a child,
// ask how many children are (in one call, so a scheduler that can answer a whole refresh at once
// is asked once), classify how one ended, cancel one, wait for one to change. A kind's seam adds
// only what is its own (building a step or a trial, a trial's reports, Ax's proposals) and derives
// from this one; OverRunner implements the shared part over a Runner, and tests use fakes.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "composite/claims.h"
#include "torchx/runner/runner.h"
#include "torchx/schedulers/scheduler.h"
#include "torchx/status.h"

namespace torchx::composite {

using ChildStatus = Result<std::optional<specs::AppStatus>>;

class ChildBackend {
 public:
  virtual ~ChildBackend() = default;
  /// Submits a child's dry run; returns its handle.
  virtual Result<std::string> Schedule(const schedulers::DryRunInfo& info) = 0;
  /// nullopt when the child's scheduler no longer knows the app; an error when it cannot say now.
  virtual ChildStatus Status(const std::string& handle) = 0;
  /// The statuses of `handles`, one per handle in order. By default one Status call each; a seam
  /// whose schedulers answer many at once overrides it.
  virtual std::vector<ChildStatus> Statuses(const std::vector<std::string>& handles);
  /// Why an ended child did not succeed, where its scheduler can tell (nullopt: it cannot).
  virtual Result<std::optional<schedulers::FailureReport>> Classify(const std::string& handle);
  virtual ::torchx::Status Cancel(const std::string& handle) = 0;
  /// The handle of the child submitted on `scheduler` with DryRunInfo::submission_key `key`,
  /// nullopt where it knows none; kUnimplemented (the default) where it cannot look one up.
  virtual Result<std::optional<std::string>> FindSubmission(const std::string& scheduler, const std::string& key);
  /// How long after a submission FindSubmission still finds it (0 by default).
  virtual Result<double> FindableForSeconds(const std::string& scheduler);
  /// Blocks until `handle` may have changed, at most `max_wait` (sleeps where it cannot tell).
  /// Returns whether its scheduler notified (Runner::WaitForUpdate).
  virtual bool WaitForUpdate(const std::string& handle, std::chrono::milliseconds max_wait) = 0;
  /// The same for several children, woken by whichever changes first (Runner::WaitForAnyUpdate).
  /// Default: the first one's wait.
  virtual bool WaitForAnyUpdate(const std::vector<std::string>& handles, std::chrono::milliseconds max_wait) {
    return !handles.empty() && WaitForUpdate(handles.front(), max_wait);
  }
};

/// Whether a child's scheduler knows `handle` now (a claim's planned handle, claims.h).
Result<bool> ChildExists(ChildBackend& backend, const std::string& handle);

/// How claims are looked up through `backend` (claims.h), which must outlive the lookup.
ClaimLookup LookupThrough(ChildBackend& backend);

/// A kind's seam (`Seam` derives from ChildBackend) with the shared part done through a Runner,
/// which must outlive it; the kind's own members reach the Runner through runner().
template <typename Seam>
class OverRunner : public Seam {
 public:
  explicit OverRunner(runner::Runner& runner) : runner_(runner) {}
  Result<std::string> Schedule(const schedulers::DryRunInfo& info) override { return runner_.Schedule(info); }
  ChildStatus Status(const std::string& handle) override { return runner_.Status(handle); }
  Result<std::optional<schedulers::FailureReport>> Classify(const std::string& handle) override {
    return runner_.ClassifyFailure(handle);
  }
  ::torchx::Status Cancel(const std::string& handle) override { return runner_.Cancel(handle); }
  Result<std::optional<std::string>> FindSubmission(const std::string& scheduler, const std::string& key) override {
    return runner_.FindSubmission(scheduler, key);
  }
  Result<double> FindableForSeconds(const std::string& scheduler) override {
    return runner_.FindableForSeconds(scheduler);
  }
  bool WaitForUpdate(const std::string& handle, std::chrono::milliseconds max_wait) override {
    return runner_.WaitForUpdate(handle, max_wait);
  }
  bool WaitForAnyUpdate(const std::vector<std::string>& handles, std::chrono::milliseconds max_wait) override {
    return runner_.WaitForAnyUpdate(handles, max_wait);
  }

 protected:
  runner::Runner& runner() { return runner_; }

 private:
  runner::Runner& runner_;
};

}  // namespace torchx::composite
