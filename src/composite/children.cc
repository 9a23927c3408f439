#include "composite/children.h"

#include "composite/child_backend.h"

#include <chrono>

namespace torchx::composite {

double EpochNow() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

runner::RunnerOptions ChildRunnerOptions(const std::string& session, std::shared_ptr<const Clock> clock) {
  runner::RunnerOptions o;
  o.session_name = session;
  o.clock = std::move(clock);
  return o;
}

Status CancelChildren(const std::vector<std::string>& handles,
                      const std::function<Status(const std::string&)>& cancel) {
  Status first = OkStatus();
  for (const std::string& h : handles) {
    Status s = cancel(h);
    if (!s.ok() && first.ok()) first = s.WithContext("cancel " + h);
  }
  return first;
}

Status DeleteChildren(const std::vector<LabelledChild>& children,
                      const std::function<Status(const std::string&)>& del) {
  for (const LabelledChild& c : children) {
    if (c.handle.empty()) continue;
    Status st = del(c.handle);
    if (!st.ok() && st.code() != StatusCode::kNotFound && st.code() != StatusCode::kUnimplemented) {
      return st.WithContext(c.label);
    }
  }
  return OkStatus();
}

std::vector<ChildStatus> ChildBackend::Statuses(const std::vector<std::string>& handles) {
  std::vector<ChildStatus> out;
  out.reserve(handles.size());
  for (const std::string& h : handles) out.push_back(Status(h));
  return out;
}

Result<std::optional<schedulers::FailureReport>> ChildBackend::Classify(const std::string&) {
  return std::optional<schedulers::FailureReport>();
}

Result<std::optional<std::string>> ChildBackend::FindSubmission(const std::string& scheduler, const std::string&) {
  return UnimplementedError(scheduler + " cannot find a submission by its key");
}

Result<double> ChildBackend::FindableForSeconds(const std::string&) { return 0.0; }

ClaimLookup LookupThrough(ChildBackend& backend) {
  ClaimLookup out;
  out.exists = [&backend](const std::string& handle) { return ChildExists(backend, handle); };
  out.find = [&backend](const std::string& scheduler, const std::string& key) {
    return backend.FindSubmission(scheduler, key);
  };
  out.findable_for = [&backend](const std::string& scheduler) { return backend.FindableForSeconds(scheduler); };
  return out;
}

Result<bool> ChildExists(ChildBackend& backend, const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(auto status, backend.Status(handle));
  return status.has_value();
}

}  // namespace torchx::composite
