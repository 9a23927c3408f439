// Slurm's nodes as hosts (`torchx hosts -s slurm`) and the way into a running job's node for a
// stack dump (`torchx debug stack`): pure functions of sinfo's rows, the queue's rows and a job's
// ids, table-tested; slurm_scheduler.cc runs the tools.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "schedulers/slurm/slurm_status.h"
#include "torchx/schedulers/hosts.h"
#include "torchx/status.h"

namespace torchx::schedulers::slurm {

/// sinfo's `-N -O` (one row per node and partition) for what a host needs, each column ended by '|'.
inline constexpr std::string_view kSinfoNodeFormat =
    "NodeList:|,StateLong:|,CPUsState:|,Memory:|,AllocMem:|,Gres:|,GresUsed:|,NodeAddr:|,Partition:|";

/// sinfo's rows as hosts, one per node (its partitions in `groups`, the default's '*' dropped), in
/// sinfo's order. kInvalidArgument naming the row it cannot read.
Result<std::vector<HostInfo>> ParseSinfoNodes(std::string_view text);

/// The GPUs in a Gres column ("gpu:4", "gpu:a100:2(S:0-1),gpu:h100:1", "gpu:a100:2(IDX:0-1)"; "(null)": 0).
int GpusInGres(std::string_view gres);

/// Puts each running job of `jobs` (the queue's rows, het components apart) on its host (its
/// BatchHost: a replica is one node): app id (the leader's) and "<role>/<replica>" from its name.
void PlaceJobs(const std::vector<SlurmJob>& jobs, std::vector<HostInfo>& hosts);

/// The command that runs `helper` (torchx-stacks) on a running replica's node inside its job:
/// srun --overlap into the job (a het job's component with --het-group), one task, with the rules
/// that pick the job's processes on that node and not the helper's own step. `extra`: more of the
/// helper's arguments (--profile S).
std::vector<std::string> StacksCommand(const std::string& helper, const SlurmJob& job,
                                       const std::vector<std::string>& extra = {});

}  // namespace torchx::schedulers::slurm
