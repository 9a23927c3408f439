// The local scheduler's state: apps and replicas in an embedded SQLite database (WAL) in the
// state directory, shared by every process on the machine that runs, queries or cancels local
// apps. Every state change is one transaction; readers never block the supervisor's writes.
//
// Thread-safety: one StateStore per thread. Any number of processes may open the same file.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "torchx/schedulers/failure_cause.h"
#include "torchx/specs/app_state.h"
#include "torchx/status.h"

struct sqlite3;

namespace torchx::schedulers::local {

struct AppRecord {
  std::string app_id;
  std::string session;
  std::string name;
  std::string appdef_json;  ///< the AppDef as submitted (canonical JSON)
  std::string plan_json;    ///< what the supervisor executes (AppPlan JSON)
  std::string app_dir;      ///< <log_dir>/<session>/<app_id>
  specs::AppState state = specs::AppState::kSubmitted;
  int num_restarts = 0;
  std::string msg;
  std::string structured_error_msg = "<NONE>";
  int supervisor_pid = 0;
  std::string supervisor_start;  ///< process identity: "<boot id>:<start ticks>"
  double created = 0;
  double updated = 0;
  bool cancel_requested = false;
  /// Why it ended other than SUCCEEDED, recorded by whoever decided the end (its supervisor, the
  /// watchdog, a reader that found the supervisor gone); nullopt while it runs, when it
  /// succeeded, and in records written before causes were (FailureReport reads those from the
  /// state and the replicas' exit codes). The fact that failure_cause.h reads: never `msg`.
  std::optional<FailureCause> end_cause;
};

struct ReplicaRecord {
  std::string app_id;
  std::string role;
  int replica_id = 0;
  int attempt = 0;
  int pid = 0;             ///< leader pid, also its process group id
  std::string proc_start;  ///< process identity of the leader, as AppRecord
  specs::AppState state = specs::AppState::kPending;
  std::optional<int> exit_code;
  std::string structured_error_msg = "<NONE>";
  bool operator==(const ReplicaRecord&) const = default;
};

/// One run of a replica (the retry history).
struct AttemptRecord {
  std::string role;
  int replica_id = 0;
  int attempt = 0;
  specs::AppState state = specs::AppState::kPending;
  std::optional<int> exit_code;
  double started = 0;
  std::optional<double> ended;
};

/// One resource sample as the supervisor keeps it: a replica's (role, replica id), or the host's
/// own GPU figures (role "", replica id -1); the sample is schedulers::SampleToJson's text.
struct UsageRow {
  std::string role;
  int replica_id = 0;
  double time = 0;
  std::string sample_json;
};

struct UsageRecord {
  double interval = 0;
  std::string host;
  std::string gpu_note;
  std::vector<UsageRow> rows;  ///< oldest first
};

class StatementCache;

class StateStore {
 public:
  /// Opens (creating the directory, file and schema as needed) `<state_dir>/local.db`.
  static Result<std::unique_ptr<StateStore>> Open(const std::string& state_dir);
  ~StateStore();

  const std::string& path() const { return path_; }

  /// Every connection checkpoints the WAL once it reaches this many pages (see Open).
  static constexpr int kWalCheckpointPages = 64;
  /// This connection's checkpoint threshold: a writer about to make a burst of commits (the
  /// supervisor starting and ending a fan-out) raises it and checkpoints once the burst is over,
  /// off the path of whoever waits for those commits.
  void SetWalCheckpointPages(int pages);
  /// A passive checkpoint (it waits for no reader) when the WAL was at kWalCheckpointPages or more
  /// at this connection's last commit; best effort.
  void CheckpointWal();

  /// kAlreadyExists if the id is taken.
  Status InsertApp(const AppRecord& app);
  /// The app and its replicas' rows (as PutReplicas) in one transaction: an app whose replicas
  /// the caller started (detached_start.h). kAlreadyExists if the id is taken.
  Status InsertStartedApp(const AppRecord& app, const std::vector<ReplicaRecord>& replicas);
  Result<std::optional<AppRecord>> GetApp(const std::string& app_id);
  Result<std::vector<ReplicaRecord>> GetReplicas(const std::string& app_id);
  /// All apps, newest first, with what a listing needs only: no AppDef, plan, app_dir or
  /// structured error (GetApp has them).
  Result<std::vector<AppRecord>> ListApps();

  Status SetSupervisor(const std::string& app_id, int pid, const std::string& start);
  /// Sets state / restarts / msg / error / end cause, unless the app is already terminal (a
  /// terminal state is final). Returns whether it changed anything. `cause`: why a FAILED or
  /// CANCELLED app ended (AppRecord::end_cause); nullopt for the other states.
  Result<bool> SetAppState(const std::string& app_id, specs::AppState state, int num_restarts, const std::string& msg,
                           const std::string& structured_error_msg, std::optional<FailureCause> cause);
  Status RequestCancel(const std::string& app_id);
  /// Inserts or replaces the replicas' rows in one transaction, and records each attempt's start,
  /// end and outcome in the retry history.
  Status PutReplicas(const std::vector<ReplicaRecord>& replicas);
  /// The replicas' rows (as PutReplicas) and then the app's state (as SetAppState), in one
  /// transaction: what the supervisor records when its replicas have started and when the app ends.
  Status PutReplicasAndState(const std::vector<ReplicaRecord>& replicas, const std::string& app_id,
                             specs::AppState state, int num_restarts, const std::string& msg,
                             const std::string& structured_error_msg, std::optional<FailureCause> cause);
  /// Records the supervisor's pid and identity, and answers whether a cancel was requested before
  /// (RequestCancel, which could not signal a supervisor not yet recorded), in one transaction.
  Result<bool> SetSupervisorAndCheckCancel(const std::string& app_id, int pid, const std::string& start);
  /// The retry history: every attempt of every replica, by role, replica and attempt.
  Result<std::vector<AttemptRecord>> GetAttempts(const std::string& app_id);
  Status DeleteApp(const std::string& app_id);

  /// The resource view's settings for an app (written once by its supervisor).
  Status PutUsageMeta(const std::string& app_id, double interval, const std::string& host, const std::string& gpu_note);
  /// Adds samples and drops the app's samples older than `drop_before`, in one transaction (the
  /// series is bounded).
  Status PutUsage(const std::string& app_id, const std::vector<UsageRow>& rows, double drop_before);
  /// nullopt when the app was never sampled (its supervisor predates sampling, or it is off).
  Result<std::optional<UsageRecord>> GetUsage(const std::string& app_id, double since = 0);

  /// Apps submitted with a non-default state directory are recorded in the default store so a
  /// bare handle still finds them.
  Status PutRedirect(const std::string& app_id, const std::string& state_dir);
  Result<std::optional<std::string>> GetRedirect(const std::string& app_id);
  Status DeleteRedirect(const std::string& app_id);

 private:
  StateStore(sqlite3* db, std::string path);
  Status Exec(const char* sql);
  Status MigrateSchema();
  Status RecordAttempt(const ReplicaRecord& replica);
  Status WriteReplicas(const std::vector<ReplicaRecord>& replicas);  // inside a transaction
  Result<bool> WriteAppState(const std::string& app_id, specs::AppState state, int num_restarts, const std::string& msg,
                             const std::string& structured_error_msg, std::optional<FailureCause> cause);

  static int OnWalCommit(void* self, sqlite3* db, const char* name, int frames);

  sqlite3* db_;
  std::string path_;
  int checkpoint_pages_ = 0;
  int wal_frames_ = 0;  // the WAL's size at this connection's last commit
  std::unique_ptr<StatementCache> statements_;
};

/// Seconds since the epoch, as a double.
double NowSeconds();

}  // namespace torchx::schedulers::local
