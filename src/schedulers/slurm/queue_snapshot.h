// What one `squeue` of all the user's jobs said, as every reader of Slurm state on a host shares
// it (queue_reader.h), and when a reader may answer from it instead of asking slurmctld again.
// Slurm asks users not to poll squeue per job; here one call answers every job a host follows.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schedulers/slurm/slurm_status.h"
#include "torchx/status.h"

namespace torchx::schedulers::slurm {

/// kSqueueFormat with the array columns first: run with `-r`, an array task has a row of its own
/// (pending ones included), named by its array job and task id.
inline constexpr std::string_view kSnapshotFormat =
    "ArrayJobID:|,ArrayTaskID:|,JobID:|,HetJobID:|,HetJobOffset:|,State:|,BatchHost:|,RestartCnt:|,exit_code:|,"
    "SubmitTime:|,Name:|";

/// One squeue of every job of the user, or why it could not be taken.
struct QueueSnapshot {
  double taken_at = 0;  ///< epoch seconds when squeue started (its rows are no older)
  /// When squeue answered: a snapshot's age counts from here, so a slow squeue (a busy or failing
  /// controller) is still shared for a whole interval. 0: as taken_at.
  double answered_at = 0;
  std::optional<std::string> error;  ///< squeue failed (slurmctld cannot be reached): its message
  std::string rows;                  ///< squeue's text, in kSnapshotFormat
  /// Whether the answer is the cluster's, for every process: false for a failure of this process
  /// alone (the tool not on its PATH, timed out or killed), which is never written to the store.
  bool shared = true;
};

/// The snapshot as its file holds it: a header line, then the rows.
std::string SnapshotToText(const QueueSnapshot& snapshot);
/// nullopt for text that is not a whole snapshot of this version.
std::optional<QueueSnapshot> SnapshotFromText(std::string_view text);

/// Rows of `squeue -r -O <kSnapshotFormat>`: ParseSqueueRows's, with an array task's rows under
/// its app id `<array job>_<task>`. A line that does not parse (a job name holding a newline) is
/// skipped: one odd job of the user's must not hide the others; asked alone, it says why.
std::vector<SlurmJob> ParseSnapshotRows(std::string_view text);

/// What decides whether a snapshot may answer for a job.
struct SnapshotAsk {
  std::optional<double> taken_at;       ///< the snapshot at hand; nullopt: none
  double answered_at = 0;               ///< when its squeue answered (0: as taken_at)
  double now = 0;                       ///< epoch seconds
  double interval = 2;                  ///< the refresh interval, seconds
  std::optional<double> touched_at;     ///< this host last submitted or cancelled the job then
  std::optional<double> answered_from;  ///< the snapshot this reader last answered the job from
};

/// Whether the snapshot answers: its answer is younger than the interval (and not from a clock
/// that went back), taken after this host's last submit or cancel of the job (`status` right after `run`
/// never says unknown, nor running after `cancel`), and not older than the one the reader last
/// answered from (a `wait` never goes back in time). One taken within kSettleSeconds of the touch
/// answers for kSettlingInterval only: slurmctld shows a cancelled job COMPLETING (running) while
/// its processes are killed, and a new job's first moments move fast; that answer is not kept for
/// a whole interval, nor asked again by every call (the host's readers share it).
bool SnapshotServes(const SnapshotAsk& ask);
inline constexpr double kSettleSeconds = 2;
inline constexpr double kSettlingInterval = 0.25;

/// The app id an array task or het component is submitted and cancelled under: `12_3` -> `12`.
std::string SubmittedId(std::string_view app_id);

}  // namespace torchx::schedulers::slurm
