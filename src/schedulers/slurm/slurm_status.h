// Reading Slurm's answers about jobs: `squeue -O` rows of the columns a status needs (one text
// shape from 22.05 to 24.11, unlike --json) and `sacct --parsable2` rows (`+` het component ids;
// with or without accounting in squeue's place).
// One het component per replica, named <role>-<replica>.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "torchx/schedulers/scheduler.h"
#include "torchx/specs/app_state.h"
#include "torchx/status.h"

namespace torchx::schedulers::slurm {

/// Every Slurm job state: COMPLETED -> SUCCEEDED; CANCELLED -> CANCELLED; PENDING, REQUEUED,
/// REQUEUE_FED, REQUEUE_HOLD, RESIZING, SUSPENDED, CONFIGURING -> PENDING; RUNNING, COMPLETING,
/// STAGE_OUT, SIGNALING -> RUNNING; BOOT_FAIL, DEADLINE, FAILED, NODE_FAIL, OUT_OF_MEMORY,
/// PREEMPTED, REVOKED, TIMEOUT, SPECIAL_EXIT -> FAILED; anything else -> UNKNOWN. Accepts sacct's
/// forms ("CANCELLED by 0", "COMPLETED+").
specs::AppState SlurmStateToAppState(std::string_view state);
/// The table SlurmStateToAppState reads: every state name Slurm defines.
const std::map<std::string, specs::AppState, std::less<>>& SlurmStates();

struct SlurmJob {
  std::string job_id;     ///< the app id: the (leader) job id
  std::string component;  ///< het component offset ("0", "1", ...), or "" for a plain job
  std::string raw_id;     ///< the component's own job id (squeue's JobID; sstat's step prefix)
  std::string name;       ///< <role>-<replica>
  std::string state;      ///< Slurm's
  std::string hostname;
  std::optional<int> exit_code;
  int restarts = 0;                 ///< times requeued (squeue's restart_cnt)
  std::optional<double> submitted;  ///< epoch seconds: squeue's SubmitTime, accounting's Submit
};

/// squeue's `-O` (--Format) for what a status needs, each column ended by '|'. Name comes last:
/// it is the one free-text column. squeue filters `-j` with it on every version (22.05's --json
/// ignores `-j`), and it is ~20x cheaper than --json for slurmctld and for us with 1,000 jobs queued.
inline constexpr std::string_view kSqueueFormat =
    "JobID:|,HetJobID:|,HetJobOffset:|,State:|,BatchHost:|,RestartCnt:|,exit_code:|,SubmitTime:|,Name:|";

/// A component's name "<role>-<replica>" as its role and replica id; a name without a numeric
/// suffix is a role of its own, replica 0.
std::pair<std::string, int> RoleAndReplica(const std::string& name);

/// A Slurm time ("2026-11-23T22:40:01", the cluster's local time) as epoch seconds; nullopt for
/// "Unknown", "N/A" and anything else.
std::optional<double> SlurmTime(std::string_view text);

/// Rows of `squeue -h -O <kSqueueFormat>` (the same text from 22.05 to 24.11).
Result<std::vector<SlurmJob>> ParseSqueueRows(std::string_view text);
/// Rows of `sacct --parsable2 -o JobID,JobName,State,ExitCode,NodeList` (steps skipped).
Result<std::vector<SlurmJob>> ParseSacct(std::string_view text);

/// The app `app_id` from jobs (het components grouped): nullopt when none belongs to it.
/// `scontrol show job -o` (one line per job, `Key=Value` fields) as ordered (key, value) pairs of
/// the first job; a value may hold spaces (`Command=/x/run a b`): a token without its own `Key=`
/// belongs to the value before it. kInvalidArgument for text without a `JobId=` field.
Result<std::vector<std::pair<std::string, std::string>>> ParseScontrolJob(std::string_view text);

/// Why an ended job did not succeed, from its components' states (het components, or the one
/// job): the gravest cause among them, in this order: NODE_FAIL, BOOT_FAIL (node_failure);
/// PREEMPTED (preemption); TIMEOUT, DEADLINE (time_limit); REVOKED (engine_lost); OUT_OF_MEMORY
/// (out_of_memory); FAILED, SPECIAL_EXIT (user_error); CANCELLED (cancelled). nullopt when no
/// component has ended other than COMPLETED (the job runs, waits or succeeded).
std::optional<FailureReport> ClassifySlurmJobs(const std::vector<SlurmJob>& components);

std::optional<DescribeAppResponse> DescribeFromJobs(const std::string& app_id, const std::vector<SlurmJob>& jobs);

}  // namespace torchx::schedulers::slurm
