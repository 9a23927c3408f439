// The sbatch request TorchX's slurm scheduler builds: one heterogeneous-job group per replica
// (`<role>-<i>`), one `srun` over all groups, requeue-based retries. Pure: the Slurm version and
// the partition's memory come in as arguments, so dry runs and tests need no cluster.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torchx/specs/app_def.h"
#include "torchx/specs/runopts.h"
#include "torchx/status.h"

namespace torchx::schedulers::slurm {

struct SlurmVersion {
  int major = 24;
  int minor = 5;
  friend auto operator<=>(const SlurmVersion&, const SlurmVersion&) = default;
};
/// "slurm 22.05.8" (sinfo --version) -> {22, 5}.
std::optional<SlurmVersion> ParseSlurmVersion(const std::string& text);

struct SlurmReplicaRequest {
  std::string name;                      ///< <role>-<replica>
  std::vector<std::string> sbatch_opts;  ///< for its `#SBATCH` line
  std::vector<std::string> srun_opts;    ///< before the command in `srun`
  std::vector<std::string> command;      ///< shell words, already quoted
};

struct SlurmBatchRequest {
  std::vector<std::string> cmd;  ///< sbatch --parsable [job-level flags]
  std::vector<SlurmReplicaRequest> replicas;
  int max_retries = 0;
  std::string job_dir;  ///< cfg job_dir, or empty
  /// The directory copied into job_dir (`--workspace` with workspace_type=dir); empty: the
  /// submitting directory.
  std::string workspace;
  /// Workspace images (`repo:tag`, workspace_type=docker) pushed before sbatch: the nodes'
  /// container plugin pulls them.
  std::vector<std::string> push;

  /// The batch script (`#SBATCH` header, `srun` with ` :\` separated groups, retry logic).
  std::string Materialize() const;
};

/// An array job: one sbatch for many one-replica tasks (a sweep's trials). Slurm runs task i of
/// array job A as its own job `A_i`, at most `max_parallel` at once (`--array=0-N%P`).
struct SlurmArrayRequest {
  /// Task 0's request: the array's flags (`cmd`), header, job_dir, workspace, images to push.
  SlurmBatchRequest first;
  /// Each task's replica (its srun options and command), in order.
  std::vector<SlurmReplicaRequest> tasks;
  int max_parallel = 0;

  /// The batch script: task 0's `#SBATCH` header with `--array`, then a `case` on
  /// $SLURM_ARRAY_TASK_ID running that task's srun line, with `<array job>_<task>` wherever a
  /// single job's script says $SLURM_JOB_ID (log file names, TORCHX_JOB_ID), so each task's
  /// logs and handle are its own. Retries requeue the task.
  std::string Materialize() const;
};

/// The array of `tasks` (requests BuildSlurmRequest made, Python may have edited them).
/// kInvalidArgument naming the first task that cannot join task 0's array: several replicas, or
/// other sbatch flags, header options, job_dir, workspace or retries.
Result<SlurmArrayRequest> BuildSlurmArray(const std::vector<SlurmBatchRequest>& tasks, int max_parallel);

/// The request as JSON ({"cmd", "replicas": [{"name", "sbatch_opts", "srun_opts", "command"}],
/// "max_retries", "job_dir", "workspace", "push"}; the last two optional): the dry run's payload, and the form Python's
/// SlurmBatchRequest edits. kInvalidArgument naming the field for a malformed one.
std::string SlurmBatchRequestToJson(const SlurmBatchRequest& request);
Result<SlurmBatchRequest> SlurmBatchRequestFromJson(const std::string& json);

/// The runopts of the slurm scheduler (TorchX's, plus `nomem`, `requeue` and the workspace's).
specs::RunOpts SlurmRunOpts();

/// SlurmRunOpts() as values; empty strings for options not given.
struct SlurmOptions {
  std::string partition;
  std::string time;
  std::string comment;
  std::string constraint;
  std::string mail_user;
  std::string mail_type;
  std::string job_dir;
  std::string qos;
  std::string account;
  std::string dependency;  ///< sbatch --dependency (with --kill-on-invalid-dep=yes)
  bool nomem = false;
  /// --requeue (Slurm restarts the job after a node failure or preemption; retries requeue it), or
  /// --no-requeue (the job ends NODE_FAIL / PREEMPTED: a managed job recovers it).
  bool requeue = true;
  /// "dir" (the job runs in job_dir, or the submitting directory) or "docker" (every replica runs
  /// inside its role's image through the cluster's container plugin: `srun --container-image`,
  /// pyxis/enroot), torchx-nightly's builders.
  std::string workspace_type = "dir";

  /// REQUIRES: `cfg` resolved against SlurmRunOpts().
  static SlurmOptions From(const specs::ResolvedCfg& cfg);
};

/// The `dependency` option that makes a job wait for every job in `job_ids` to succeed
/// (`afterok:<id>:<id>`), combined with a dependency the user gave (`given`, both required:
/// Slurm's `,`). kInvalidArgument for an empty id, or a `given` that joins its parts with `?`
/// (any of): Slurm refuses a dependency that mixes `,` and `?`.
Result<std::string> AfterOkDependency(std::string_view given, const std::vector<std::string>& job_ids);

/// A submission key (DryRunInfo::submission_key) as the job's comment carries it: `torchx:<key>`,
/// after the user's own comment where there is one (sbatch takes one comment).
std::string SubmissionTag(std::string_view key);
/// `cmd` (sbatch's arguments) with the key's tag added to its `--comment=`, or a `--comment=` of
/// the tag alone.
void TagSubmission(std::vector<std::string>& cmd, std::string_view key);
/// The job `squeue -h -t all -o '%i|%k'` (`text`) lists with the key's tag in its comment: its id
/// (a heterogeneous job's, without the component), nullopt when none has it.
std::optional<std::string> JobWithSubmissionTag(std::string_view text, std::string_view key);
/// MinJobAge from `scontrol show config` (`MinJobAge = 300 sec`): how long squeue keeps an ended
/// job. nullopt when the text does not say.
std::optional<double> ParseMinJobAge(std::string_view config);

/// `partition_mem_mb`: RealMemory of the target partition; --mem is left out when it is <= 1000
/// (tiny test partitions) or when nomem is set. kInvalidArgument naming the role for
/// requests Slurm cannot express.
Result<SlurmBatchRequest> BuildSlurmRequest(const specs::AppDef& app, const SlurmOptions& options, SlurmVersion version,
                                            std::optional<int> partition_mem_mb);

}  // namespace torchx::schedulers::slurm
