#include "schedulers/local/failure_cause.h"

#include <fmt/format.h>

namespace torchx::schedulers::local {

FailureReport ClassifyLocalEnd(const AppRecord& app, const std::vector<ReplicaRecord>& replicas) {
  if (app.state == specs::AppState::kCancelled) {
    return {FailureCause::kCancelled, app.msg.empty() ? "cancelled" : app.msg};
  }
  std::string_view msg(app.msg);
  if (msg == kHostRebooted) return {FailureCause::kNodeFailure, app.msg};
  if (msg == kSupervisorNeverStarted || msg.starts_with(kSupervisorDiedPrefix)) {
    return {FailureCause::kSupervisorLost, app.msg};
  }
  for (const ReplicaRecord& r : replicas) {
    if (r.state != specs::AppState::kFailed || !r.exit_code) continue;
    if (*r.exit_code > 0) {
      return {FailureCause::kUserError, fmt::format("{}/{} exited with code {}", r.role, r.replica_id, *r.exit_code)};
    }
    if (*r.exit_code < 0) {
      return {FailureCause::kUnknown,
              fmt::format("{}/{} was killed by signal {} (not by the launcher)", r.role, r.replica_id, -*r.exit_code)};
    }
  }
  return {FailureCause::kUnknown, app.msg};
}

}  // namespace torchx::schedulers::local
