#include "schedulers/local/failure_cause.h"

#include <fmt/format.h>

namespace torchx::schedulers::local {

FailureCause CauseOfReplicaExit(int exit_code) {
  return exit_code > 0 ? FailureCause::kUserError : FailureCause::kUnknown;
}

namespace {

// The first replica that failed with an exit code, in the store's order.
const ReplicaRecord* FirstFailed(const std::vector<ReplicaRecord>& replicas) {
  for (const ReplicaRecord& r : replicas) {
    if (r.state == specs::AppState::kFailed && r.exit_code && *r.exit_code != 0) return &r;
  }
  return nullptr;
}

std::string ExitInWords(const ReplicaRecord& r) {
  if (*r.exit_code > 0) return fmt::format("{}/{} exited with code {}", r.role, r.replica_id, *r.exit_code);
  return fmt::format("{}/{} was killed by signal {} (not by the launcher)", r.role, r.replica_id, -*r.exit_code);
}

}  // namespace

FailureReport ClassifyLocalEnd(const AppRecord& app, const std::vector<ReplicaRecord>& replicas) {
  if (app.state == specs::AppState::kCancelled) {
    return {FailureCause::kCancelled, app.msg.empty() ? "cancelled" : app.msg};
  }
  const ReplicaRecord* failed = FirstFailed(replicas);
  if (app.end_cause) {
    // The supervisor's message names the replica and its code; a signal reads better in words.
    bool signalled = failed && *failed->exit_code < 0 && *app.end_cause == FailureCause::kUnknown;
    return {*app.end_cause, signalled || (app.msg.empty() && failed) ? ExitInWords(*failed) : app.msg};
  }
  if (failed) return {CauseOfReplicaExit(*failed->exit_code), ExitInWords(*failed)};
  return {FailureCause::kUnknown, app.msg};
}

}  // namespace torchx::schedulers::local
