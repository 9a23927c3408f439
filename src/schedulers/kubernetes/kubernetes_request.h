// The kubernetes request: what a dry run builds (DryRunInfo.payload), what Python's
// KubernetesScheduler shows as TorchX's request (a V1 resource) and may edit, and what Schedule
// sends: the Volcano Job, its namespace, and the workspace images to push before it is created.
// Decoding never throws: an edited or malformed payload is kInvalidArgument naming the field.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "torchx/status.h"

namespace torchx::schedulers::kubernetes {

struct KubernetesRequest {
  std::string ns;        ///< the job's namespace
  std::string job_json;  ///< the batch.volcano.sh/v1alpha1 Job: a JSON object with metadata.name
  std::string job_name;  ///< its metadata.name
  /// Images (`repo:tag`) this submission built from a workspace, pushed before the job is created.
  std::vector<std::string> push;
};

std::string KubernetesRequestToJson(const KubernetesRequest& request);
/// kInvalidArgument naming the field ("kubernetes request: job.metadata.name: ...").
Result<KubernetesRequest> KubernetesRequestFromJson(std::string_view payload);

}  // namespace torchx::schedulers::kubernetes
