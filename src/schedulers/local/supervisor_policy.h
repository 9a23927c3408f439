// The local supervisor's decisions, apart from the system calls that carry them out: which
// replica to start, signal or restart, when to arm the kill-grace timer, what to record in the
// state store and when the app is over. Events go in, actions come out; it makes no system call,
// touches no file, reads no clock. That keeps the retry / cancel / grace state machine testable
// with fakes and no real processes (supervisor_policy_test.cc), while supervisor.cc executes the
// actions with the real launcher, log writer, event loop and store.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "schedulers/local/app_plan.h"
#include "schedulers/local/state_store.h"
#include "torchx/specs/app_state.h"

namespace torchx::schedulers::local {

/// "<role>/<replica_id>", as messages and logs name a replica.
std::string ReplicaLabel(const ReplicaPlan& replica);

namespace action {

/// Start attempt `attempt` of replica `replica`. For attempt > 0 the executor first closes the
/// previous attempt's pipes and log files and archives its logs. The executor must answer with
/// SupervisorPolicy::OnSpawned or OnSpawnFailed before it carries out the next action.
struct Spawn {
  size_t replica;
  int attempt;
  bool operator==(const Spawn&) const = default;
};

/// Send `signal` to the process group of the replica's latest launched process (it may have
/// exited: leftovers of its group are reached too, see SignalGroupOrLeftovers).
struct Signal {
  size_t replica;
  int signal;
  bool operator==(const Signal&) const = default;
};

/// (Re)start the one kill-grace timer; SupervisorPolicy::OnGraceExpired when it fires.
struct ArmGrace {
  double seconds;
  bool operator==(const ArmGrace&) const = default;
};

struct DisarmGrace {
  bool operator==(const DisarmGrace&) const = default;
};

/// Write the app's row (StateStore::SetAppState).
struct RecordApp {
  specs::AppState state;
  int num_restarts;
  std::string msg;
  std::string structured_error;
  bool operator==(const RecordApp&) const = default;
};

/// The app is over: close what is left of the replicas' output, write `replicas`, the summary
/// file and then the terminal app state (in that order: a reader that sees the terminal state
/// finds the rest), and stop.
struct Finish {
  specs::AppState state;
  int num_restarts;
  std::string msg;
  std::string structured_error;
  std::vector<ReplicaRecord> replicas;
  /// Why it ended other than SUCCEEDED (AppRecord::end_cause); nullopt when it succeeded.
  std::optional<FailureCause> cause = std::nullopt;
};

}  // namespace action

using SupervisorAction = std::variant<action::Spawn, action::Signal, action::ArmGrace, action::DisarmGrace,
                                      action::RecordApp, action::Finish>;
using SupervisorActions = std::vector<SupervisorAction>;

/// What the executor learnt about a replica's exit.
struct ReplicaExit {
  size_t replica;
  int exit_code;  ///< Python's convention, which TorchX reports: a negative code is the killing signal
  /// The replica's error file (TORCHELASTIC_ERROR_FILE) as it was at the exit, "<NONE>" when absent
  /// or empty, and when it was written (the app's structured error is the earliest one).
  std::string structured_error = "<NONE>";
  std::chrono::file_clock::time_point error_written = std::chrono::file_clock::time_point::max();
};

/// The retry / stop state machine of one app. Not thread-safe; one per supervisor.
class SupervisorPolicy {
 public:
  /// `plan` must outlive the policy (the supervisor owns both).
  SupervisorPolicy(std::string app_id, const AppPlan& plan);

  /// Starts every replica (attempt 0).
  SupervisorActions Start();
  /// Every replica of Start has been launched (their log files exist): the app is RUNNING,
  /// unless a failure already stopped it.
  SupervisorActions OnLaunched();

  /// Answers to action::Spawn. `exec_error` (unlabelled, e.g. "cannot start `x` in /d: No such
  /// file or directory") means the process started but its exec failed; it exits with 127 and
  /// that error becomes the app's message.
  SupervisorActions OnSpawned(size_t replica, int pid, const std::string& identity, const std::string& exec_error = "");
  /// No process could be started (no pipes, clone failed): handled as an exit with code 127.
  SupervisorActions OnSpawnFailed(size_t replica, const std::string& why);

  SupervisorActions OnExited(const ReplicaExit& exit);
  /// A stop signal (SIGTERM, SIGINT, ...) reached the supervisor: cancel the app.
  SupervisorActions OnCancel(int signal);
  SupervisorActions OnGraceExpired();

  /// Rows of the replicas changed since the last call (one store transaction per event batch).
  std::vector<ReplicaRecord> TakeReplicaRecords();

  /// Whether the app has reached its end (a stop began and no replica is left running) and
  /// Finish has not been called yet.
  bool ShouldFinish() const;
  /// Kills what may be left of every replica's group and produces the final records.
  SupervisorActions Finish();

  bool AnyRunning() const;
  int num_restarts() const { return num_restarts_; }

 private:
  struct Replica {
    const ReplicaPlan* plan = nullptr;
    int attempt = 0;
    int pid = 0;
    std::string identity;
    bool running = false;  // from the Spawn action until its exit (or spawn failure)
    specs::AppState state = specs::AppState::kPending;
    std::optional<int> exit_code;
    std::string structured_error = "<NONE>";
    std::chrono::file_clock::time_point error_written = std::chrono::file_clock::time_point::max();
    bool counted_success = false;  // included in succeeded_
  };

  void SpawnReplica(size_t i, SupervisorActions& out);
  void OnExit(size_t i, SupervisorActions& out);
  void MaybeRestart(SupervisorActions& out);
  void BeginStop(specs::AppState final_state, std::optional<FailureCause> cause, const std::string& msg,
                 SupervisorActions& out);
  void SignalReplica(size_t i, int sig, SupervisorActions& out) const;
  void RecordAppState(specs::AppState state, const std::string& msg, SupervisorActions& out) const;
  std::string AppStructuredError() const;
  ReplicaRecord RecordOf(size_t i) const;

  std::string app_id_;
  const AppPlan& plan_;
  std::vector<Replica> replicas_;
  size_t succeeded_ = 0;
  std::set<size_t> dirty_;
  std::vector<ReplicaRecord> ended_attempts_;  // attempts ended by a restart, not yet taken
  std::set<size_t> restart_set_;               // replicas being stopped for a restart; respawned once all are down
  std::map<std::string, int> role_restarts_;
  int num_restarts_ = 0;
  std::optional<specs::AppState> final_state_;
  std::optional<FailureCause> final_cause_;
  std::string final_msg_;
  std::string spawn_error_;  // the first start failure since the last restart: the app's message
  bool finished_ = false;
};

}  // namespace torchx::schedulers::local
