// The local supervisor's retry / stop state machine (see supervisor_policy.h). Pure: every
// effect is an action returned to the caller.
#include "schedulers/local/supervisor_policy.h"

#include "schedulers/local/failure_cause.h"

#include <signal.h>

#include <fmt/format.h>

namespace torchx::schedulers::local {

using specs::AppState;

std::string ReplicaLabel(const ReplicaPlan& replica) { return fmt::format("{}/{}", replica.role, replica.replica_id); }

SupervisorPolicy::SupervisorPolicy(std::string app_id, const AppPlan& plan) : app_id_(std::move(app_id)), plan_(plan) {
  replicas_.reserve(plan_.replicas.size());
  for (const ReplicaPlan& rp : plan_.replicas) {
    Replica r;
    r.plan = &rp;
    replicas_.push_back(std::move(r));
  }
}

SupervisorActions SupervisorPolicy::Start() {
  SupervisorActions out;
  for (size_t i = 0; i < replicas_.size(); ++i) SpawnReplica(i, out);
  return out;
}

SupervisorActions SupervisorPolicy::OnLaunched() {
  SupervisorActions out;
  if (!final_state_) RecordAppState(AppState::kRunning, "", out);
  return out;
}

void SupervisorPolicy::SpawnReplica(size_t i, SupervisorActions& out) {
  Replica& r = replicas_[i];
  r.exit_code.reset();
  r.structured_error = "<NONE>";
  r.error_written = std::chrono::file_clock::time_point::max();
  // Counted as running from here: a failure reported while this batch of spawns is carried out
  // must wait for this replica too rather than start it a second time.
  r.running = true;
  r.state = AppState::kRunning;
  dirty_.insert(i);
  out.push_back(action::Spawn{i, r.attempt});
}

SupervisorActions SupervisorPolicy::OnSpawned(size_t i, int pid, const std::string& identity,
                                              const std::string& exec_error) {
  Replica& r = replicas_[i];
  r.pid = pid;
  r.identity = identity;
  if (!exec_error.empty() && spawn_error_.empty())
    spawn_error_ = fmt::format("{}: {}", ReplicaLabel(*r.plan), exec_error);
  dirty_.insert(i);
  return {};
}

SupervisorActions SupervisorPolicy::OnSpawnFailed(size_t i, const std::string& why) {
  SupervisorActions out;
  Replica& r = replicas_[i];
  r.running = false;
  r.state = AppState::kFailed;
  r.exit_code = 127;
  if (spawn_error_.empty()) spawn_error_ = fmt::format("{}: {}", ReplicaLabel(*r.plan), why);
  dirty_.insert(i);
  OnExit(i, out);
  return out;
}

SupervisorActions SupervisorPolicy::OnExited(const ReplicaExit& exit) {
  SupervisorActions out;
  Replica& r = replicas_[exit.replica];
  if (!r.running) return out;
  r.running = false;
  r.exit_code = exit.exit_code;
  r.state = exit.exit_code == 0 ? AppState::kSucceeded : AppState::kFailed;
  if (final_state_ == AppState::kCancelled) r.state = AppState::kCancelled;
  if (r.state == AppState::kFailed) {
    r.structured_error = exit.structured_error;
    r.error_written = exit.error_written;
  }
  dirty_.insert(exit.replica);
  OnExit(exit.replica, out);
  return out;
}

SupervisorActions SupervisorPolicy::OnCancel(int signal) {
  SupervisorActions out;
  BeginStop(AppState::kCancelled, FailureCause::kCancelled, fmt::format("cancelled (signal {})", signal), out);
  return out;
}

SupervisorActions SupervisorPolicy::OnGraceExpired() {
  SupervisorActions out;
  for (size_t i = 0; i < replicas_.size(); ++i) {
    if (replicas_[i].running) SignalReplica(i, SIGKILL, out);
  }
  return out;
}

void SupervisorPolicy::OnExit(size_t i, SupervisorActions& out) {
  Replica& r = replicas_[i];
  if (final_state_) return;  // stopping: Finish comes once nothing is left
  if (restart_set_.count(i)) {
    MaybeRestart(out);
    return;
  }
  if (r.state == AppState::kSucceeded) {
    if (!r.counted_success) {
      r.counted_success = true;
      ++succeeded_;
    }
    if (succeeded_ == replicas_.size()) BeginStop(AppState::kSucceeded, std::nullopt, "", out);
    return;
  }
  const RolePolicy& policy = plan_.roles.at(r.plan->role);
  std::string why = spawn_error_.empty()
                        ? fmt::format("{} exited with code {}", ReplicaLabel(*r.plan), r.exit_code.value_or(-1))
                        : spawn_error_;
  if (role_restarts_[r.plan->role] >= policy.max_retries) {
    BeginStop(AppState::kFailed, CauseOfReplicaExit(r.exit_code.value_or(-1)), why, out);
    return;
  }
  role_restarts_[r.plan->role]++;
  num_restarts_++;
  spawn_error_.clear();
  for (size_t k = 0; k < replicas_.size(); ++k) {
    bool in_set = policy.retry_policy == specs::RetryPolicy::kApplication ||
                  (policy.retry_policy == specs::RetryPolicy::kRole && replicas_[k].plan->role == r.plan->role) ||
                  k == i;
    if (!in_set) continue;
    restart_set_.insert(k);
    if (replicas_[k].running) SignalReplica(k, SIGTERM, out);
  }
  RecordAppState(AppState::kRunning, fmt::format("restarting after {} (restart {})", why, num_restarts_), out);
  out.push_back(action::ArmGrace{plan_.kill_grace_seconds});
  MaybeRestart(out);
}

// Restarts the restart set once every replica in it has stopped.
void SupervisorPolicy::MaybeRestart(SupervisorActions& out) {
  for (size_t k : restart_set_) {
    if (replicas_[k].running) return;
  }
  std::set<size_t> set = std::move(restart_set_);
  restart_set_.clear();
  out.push_back(action::DisarmGrace{});
  for (size_t k : set) {
    Replica& r = replicas_[k];
    if (r.counted_success) {  // it has to succeed again
      r.counted_success = false;
      --succeeded_;
    }
    SignalReplica(k, SIGKILL, out);          // leftovers of the old attempt's process group
    ended_attempts_.push_back(RecordOf(k));  // how the old attempt ended, for the retry history
    r.attempt++;
    SpawnReplica(k, out);
  }
}

void SupervisorPolicy::BeginStop(AppState final_state, std::optional<FailureCause> cause, const std::string& msg,
                                 SupervisorActions& out) {
  if (final_state_) return;
  final_state_ = final_state;
  final_cause_ = cause;
  final_msg_ = msg;
  restart_set_.clear();
  for (size_t i = 0; i < replicas_.size(); ++i) {
    if (replicas_[i].running) {
      SignalReplica(i, SIGTERM, out);
      if (final_state == AppState::kCancelled) replicas_[i].state = AppState::kCancelled;
    }
  }
  if (AnyRunning()) out.push_back(action::ArmGrace{plan_.kill_grace_seconds});
}

void SupervisorPolicy::SignalReplica(size_t i, int sig, SupervisorActions& out) const {
  if (replicas_[i].pid > 0) out.push_back(action::Signal{i, sig});
}

bool SupervisorPolicy::AnyRunning() const {
  for (const Replica& r : replicas_) {
    if (r.running) return true;
  }
  return false;
}

void SupervisorPolicy::RecordAppState(AppState state, const std::string& msg, SupervisorActions& out) const {
  out.push_back(action::RecordApp{state, num_restarts_, msg, AppStructuredError()});
}

// The app's structured error is the earliest replica error file, as TorchX reports it.
std::string SupervisorPolicy::AppStructuredError() const {
  std::string err = "<NONE>";
  auto earliest = std::chrono::file_clock::time_point::max();
  for (const Replica& r : replicas_) {
    if (r.structured_error == "<NONE>") continue;
    if (r.error_written < earliest || err == "<NONE>") {
      earliest = r.error_written;
      err = r.structured_error;
    }
  }
  return err;
}

ReplicaRecord SupervisorPolicy::RecordOf(size_t i) const {
  const Replica& r = replicas_[i];
  ReplicaRecord rec;
  rec.app_id = app_id_;
  rec.role = r.plan->role;
  rec.replica_id = r.plan->replica_id;
  rec.attempt = r.attempt;
  rec.pid = r.pid;
  rec.proc_start = r.identity;
  rec.state = r.state;
  rec.exit_code = r.exit_code;
  rec.structured_error_msg = r.structured_error;
  return rec;
}

std::vector<ReplicaRecord> SupervisorPolicy::TakeReplicaRecords() {
  // Ended attempts first: the store keeps the newest row per replica and each attempt's history.
  std::vector<ReplicaRecord> rows = std::move(ended_attempts_);
  ended_attempts_.clear();
  rows.reserve(rows.size() + dirty_.size());
  for (size_t i : dirty_) rows.push_back(RecordOf(i));
  dirty_.clear();
  return rows;
}

bool SupervisorPolicy::ShouldFinish() const { return final_state_ && !finished_ && !AnyRunning(); }

SupervisorActions SupervisorPolicy::Finish() {
  SupervisorActions out;
  if (!final_state_ || finished_) return out;
  finished_ = true;
  // Whatever the leaders left behind in their groups goes too.
  for (size_t i = 0; i < replicas_.size(); ++i) SignalReplica(i, SIGKILL, out);
  action::Finish finish{*final_state_, num_restarts_, final_msg_, "<NONE>", {}, final_cause_};
  for (size_t i = 0; i < replicas_.size(); ++i) {
    Replica& r = replicas_[i];
    if (r.state == AppState::kRunning || r.state == AppState::kPending) {
      r.state = *final_state_ == AppState::kCancelled ? AppState::kCancelled : AppState::kFailed;
    }
    finish.replicas.push_back(RecordOf(i));
  }
  dirty_.clear();
  finish.structured_error = AppStructuredError();
  out.push_back(std::move(finish));
  return out;
}

}  // namespace torchx::schedulers::local
