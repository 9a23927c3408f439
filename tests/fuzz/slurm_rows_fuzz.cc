// Slurm's answers about jobs (`squeue -O` rows, `sacct --parsable2` rows): never crashes; every job
// read has a numeric id, and grouping the jobs of each id into an app always succeeds.
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "schedulers/slurm/slurm_status.h"

namespace {

void Check(const torchx::Result<std::vector<torchx::schedulers::slurm::SlurmJob>>& jobs) {
  if (!jobs) return;
  // Once per id: the rows of a het job share it, and describing is linear in the rows.
  std::set<std::string> described;
  for (const auto& job : *jobs) {
    if (job.job_id.empty()) std::abort();
    if (!described.insert(job.job_id).second) continue;
    if (!torchx::schedulers::slurm::DescribeFromJobs(job.job_id, *jobs)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Check(torchx::schedulers::slurm::ParseSqueueRows(text));
  Check(torchx::schedulers::slurm::ParseSacct(text));
  return 0;
}
