// Every question this process asks Slurm about a job's state, answered from one batched read:
// one `squeue` of all the user's jobs per refresh interval, shared through a SnapshotStore with
// the user's other processes on this host (drivers, `torchx status`, the dashboard), and one
// `sacct` per refresh for the followed jobs the queue has forgotten. Ended jobs accounting
// answered for are remembered, never asked again. Not thread-safe: each scheduler instance (one
// per thread) has its own reader; the store is what they share.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/subprocess.h"
#include "schedulers/slurm/queue_snapshot.h"
#include "schedulers/slurm/slurm_status.h"
#include "schedulers/slurm/snapshot_store.h"
#include "torchx/clock.h"
#include "torchx/status.h"

namespace torchx::schedulers::slurm {

/// A job's rows and where they came from.
struct JobRows {
  enum class Source { kQueue, kAccounting, kNone };
  Source source = Source::kNone;
  std::vector<SlurmJob> jobs;  ///< the app's rows (het components, or the one job)
  /// squeue failed (slurmctld cannot be reached): its message. The rows, if any, are accounting's.
  std::optional<std::string> controller_error;
};

class QueueReader {
 public:
  /// `tools` runs squeue and sacct; `interval` is the refresh interval in seconds.
  QueueReader(std::shared_ptr<internal::CommandRunner> tools, std::shared_ptr<SnapshotStore> store,
              std::shared_ptr<const Clock> clock, double interval);

  /// The rows of app `app_id` (a job, an array task `<job>_<i>`, a het job's leader).
  Result<JobRows> Rows(const std::string& app_id);
  /// Every job of the user the queue lists (kUnavailable when squeue cannot be asked); read fresh
  /// when this host submitted or cancelled a job since the snapshot.
  Result<std::vector<SlurmJob>> QueueJobs();
  /// Every job of the user accounting lists (`sacct -X`, with submit times), shared as the queue
  /// is; nullopt where the cluster has no accounting (or it cannot be reached).
  Result<std::optional<std::vector<SlurmJob>>> AccountedJobs();
  /// This host just submitted or cancelled `app_id`: the next answer about it is read fresh
  /// (and answers taken soon after are kept briefly: SnapshotServes).
  void Touched(const std::string& app_id);
  /// The snapshot of `kind` the host's readers share, while no older than `max_age` seconds;
  /// else what `take` takes (under the store's lock; written for the others when shared).
  QueueSnapshot SharedFor(SnapshotKind kind, double max_age, const std::function<QueueSnapshot()>& take);

 private:
  // Makes current_ a snapshot that serves for `app_id` (empty: any job), refreshing under the
  // store's lock when neither the one held nor the store's does.
  Status Current(const std::string& app_id, std::optional<double> touched);
  Status Adopt(QueueSnapshot snapshot);
  // The store's snapshot of `kind` if `serves` it, else a new one `take` takes under the lock.
  QueueSnapshot Shared(SnapshotKind kind, const std::function<bool(const QueueSnapshot&)>& serves,
                       const std::function<QueueSnapshot()>& take);
  // Runs a query tool: its output, or the error that is the snapshot's answer.
  QueueSnapshot Take(const std::vector<std::string>& argv);
  // One sacct for every followed job the current snapshot lacks and accounting has not ended.
  void AskAccounting();
  Result<internal::CommandResult> Tool(const std::vector<std::string>& argv);

  std::shared_ptr<internal::CommandRunner> tools_;
  std::shared_ptr<SnapshotStore> store_;
  std::shared_ptr<const Clock> clock_;
  double interval_;

  std::optional<QueueSnapshot> current_;  // rows parsed into by_app_
  std::optional<QueueSnapshot> accounting_;
  std::unordered_map<std::string, std::vector<SlurmJob>> by_app_;
  std::set<std::string> followed_;                          // every app asked about
  std::map<std::string, double> answered_from_;             // app -> snapshot last answered from
  std::map<std::string, std::vector<SlurmJob>> ended_;      // accounting's final rows
  std::map<std::string, std::vector<SlurmJob>> accounted_;  // accounting's rows, this refresh
  std::optional<double> accounted_for_;                     // the snapshot accounted_ goes with
};

}  // namespace torchx::schedulers::slurm
