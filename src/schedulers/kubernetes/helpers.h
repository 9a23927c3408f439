// What kubernetes offers TorchX's Python KubernetesScheduler through Scheduler::Helper: the Volcano
// Job manifest builder's pieces, JSON text in and out, no API server contact.
//   job_app_part     {"name"}                                    -> the job name's app part (a string)
//   role_to_pod      {"name", "app", "options"}                  -> the pod of the app's only role
//   app_to_resource  {"app", "options"}                          -> the Volcano Job
//   pod_labels       {"app", "role_idx", "replica_id", "job"}    -> the replica's pod labels
// "app" is a canonical AppDef (JSON object); "options" are the manifest options with TorchX's
// argument names (namespace, queue, service_account, priority_class, reserved_millicpu,
// reserved_memmb, efa_device_count, job_name).
#pragma once

#include <string>
#include <string_view>

#include "torchx/status.h"

namespace torchx::schedulers::kubernetes {

/// kInvalidArgument naming the argument that is wrong; kNotFound listing the functions.
Result<std::string> KubernetesHelper(std::string_view function, std::string_view args_json);

}  // namespace torchx::schedulers::kubernetes
