// Property: the slurm request decoder (what Python's SlurmBatchRequest edits and Schedule reads)
// never throws or crashes; what it accepts materializes into a script, and re-encodes to a payload
// that decodes to the same request.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "schedulers/slurm/sbatch_script.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchx::schedulers::slurm;
  std::string in(reinterpret_cast<const char*>(data), size);
  auto req = SlurmBatchRequestFromJson(in);
  if (!req) return 0;
  if (req->Materialize().empty()) std::abort();
  std::string once = SlurmBatchRequestToJson(*req);
  auto again = SlurmBatchRequestFromJson(once);
  if (!again || SlurmBatchRequestToJson(*again) != once) std::abort();
  return 0;
}
