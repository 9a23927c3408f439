// Where the queue snapshot lives between the readers that share it (queue_reader.h): files in a
// per-user runtime directory for every process of the user on this host, or memory for one
// process (unit tests, and a host where the directory cannot be made safely). The OS seam under
// the reader: its fake is the memory store.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "schedulers/slurm/queue_snapshot.h"
#include "torchx/status.h"

namespace torchx::schedulers::slurm {

/// What a snapshot is of: the queue (squeue of the user's jobs), accounting's list of them
/// (`sacct -X`, what `list` and the dashboard merge with the queue), or the cluster's facts a dry
/// run reads (sinfo's version and partitions).
enum class SnapshotKind { kQueue, kAccounting, kClusterFacts };

class SnapshotStore {
 public:
  virtual ~SnapshotStore() = default;
  /// The snapshot of `kind` last written; nullopt when there is none (or it cannot be read whole).
  virtual std::optional<QueueSnapshot> Read(SnapshotKind kind) = 0;
  /// Writes `snapshot` whole (a reader sees the old one or the new one, never a part).
  virtual Status Write(SnapshotKind kind, const QueueSnapshot& snapshot) = 0;
  /// Runs `fn` holding the store's lock, so that concurrent readers wait for one squeue instead
  /// of each running it.
  virtual Status Locked(const std::function<Status()>& fn) = 0;
  /// Notes that this host submitted or cancelled `job` (its submitted id) at `at`.
  virtual void Touch(const std::string& job, double at) = 0;
  /// When this host last submitted or cancelled `job`; nullopt: not lately.
  virtual std::optional<double> TouchedAt(const std::string& job) = 0;
  /// When this host last submitted or cancelled any job; nullopt: not lately.
  virtual std::optional<double> LastTouch() = 0;
};

/// A store for this process alone.
std::shared_ptr<SnapshotStore> MakeMemorySnapshotStore();

/// A store in `dir`, for every process that opens the same one; `cluster` (the Slurm
/// configuration's path) names its files, so two clusters never share a snapshot. The directory
/// is made 0700 and must be the user's own, not writable by others.
Result<std::shared_ptr<SnapshotStore>> MakeFileSnapshotStore(const std::string& dir, const std::string& cluster);

/// $XDG_RUNTIME_DIR/torchx/slurm where the session has one, else <temp dir>/torchx-<uid>/slurm:
/// a directory on this host (a shared home would join hosts whose snapshots differ).
std::string DefaultSnapshotDir();

/// The host's store for the cluster in $SLURM_CONF (or Slurm's default configuration); the
/// process's own memory store, shared by its schedulers, when the directory cannot be used.
std::shared_ptr<SnapshotStore> HostSnapshotStore();

}  // namespace torchx::schedulers::slurm
