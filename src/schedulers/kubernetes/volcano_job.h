// The Volcano Job (batch.volcano.sh/v1alpha1) an AppDef becomes on Kubernetes: TorchX's
// manifest (one task per replica so that macros differ per replica, requests a little under
// limits, /dev/shm, mounts, retry policies per task), plus tolerations and node selectors.
// Pure: builds JSON, talks to nothing. See docs/kubernetes.md.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "torchx/schedulers/scheduler.h"
#include "torchx/specs/app_def.h"
#include "torchx/specs/app_state.h"
#include "torchx/status.h"

namespace torchx::schedulers::kubernetes {

// The labels torchx writes on jobs and pods and reads back (describe, list, logs): one name each,
// shared by the writer (volcano_job.cc), the readers (kubernetes_scheduler.cc) and the tests.
inline constexpr const char* kLabelVersion = "torchx.pytorch.org/version";
inline constexpr const char* kLabelAppName = "torchx.pytorch.org/app-name";
inline constexpr const char* kLabelRoleIndex = "torchx.pytorch.org/role-index";
inline constexpr const char* kLabelRoleName = "torchx.pytorch.org/role-name";
inline constexpr const char* kLabelReplicaId = "torchx.pytorch.org/replica-id";
inline constexpr const char* kLabelK8sName = "app.kubernetes.io/name";
inline constexpr const char* kLabelManagedBy = "app.kubernetes.io/managed-by";
inline constexpr const char* kLabelInstance = "app.kubernetes.io/instance";
inline constexpr const char* kManagedByTorchx = "torchx.pytorch.org";
/// Volcano's label on a task's pod naming its task (a replica's container is named after it).
inline constexpr const char* kLabelVolcanoTaskSpec = "volcano.sh/task-spec";

struct Toleration {
  std::string key;
  std::string op = "Exists";  ///< "Equal" when a value is given
  std::string value;
  std::string effect;  ///< empty: every effect
};

/// `key[:value][:Effect]`, or kubectl's `key=value[:Effect]` where '=' is free to use (not in
/// -cfg, which splits on it); Effect one of NoSchedule, PreferNoSchedule, NoExecute. No value:
/// the Exists operator. kInvalidArgument naming the option and the choices.
Result<Toleration> ParseToleration(const std::string& spec);

struct VolcanoJobOptions {
  std::string job_name;  ///< a valid RFC 1123 label (MakeJobName)
  std::string namespace_;
  std::string queue;
  std::string service_account;  ///< empty: the namespace's default
  std::string priority_class;   ///< empty: none
  std::vector<Toleration> tolerations;
  std::map<std::string, std::string> node_selector;
  std::string torchx_version;
  // Kubernetes keeps some of every node for itself: whole-node pods request this much less CPU
  // (millicores) and memory (MB) than they limit (TorchX's reserved_millicpu / reserved_memmb).
  int reserved_millicpu = 100;
  int reserved_memmb = 1024;
  /// vpc.amazonaws.com/efa devices: nullopt keeps the resource's count, 0 removes them, N sets N.
  std::optional<int> efa_device_count;
};

/// TorchX's normalize_str: lower-case, keep only [a-z0-9-], drop one leading '-'.
std::string NormalizeStr(const std::string& s);
/// normalize_str(make_unique(app name)), the app-name part cut to 20 characters so that pod
/// names (`<job>-<task>-0`) have room within Kubernetes' 63.
std::string MakeJobName(const std::string& app_name);
/// The task (and container) name of a replica: TorchX's normalize_str("<role>-<i>"), the role part
/// cut so that the pod name fits in 63 characters.
std::string TaskName(const std::string& job, const std::string& role, int replica);
/// The pod Volcano creates for a task: `<job>-<task>-0`.
std::string PodName(const std::string& job, const std::string& role, int replica);

/// The app part of a job name (normalized, a DNS label, cut to leave room for the unique suffix
/// and task names): MakeJobName is NormalizeStr(MakeUnique(JobNameAppPart(name))).
std::string JobNameAppPart(const std::string& app_name);

/// The pod template of one replica whose macros are already applied (TorchX's role_to_pod): the
/// container `name`, requests a little under limits, /dev/shm, the role's mounts, its env (values
/// `[FIELD_PATH]x` read from the pod's field x), the instance-type selector; no labels and no overlay
/// (AppToVolcanoJob adds them).
nlohmann::json RoleToPod(const std::string& name, const specs::Role& role, const VolcanoJobOptions& options);

/// The labels of a replica's pod (TorchX's pod_labels): values cut to what the API server accepts.
std::map<std::string, std::string> PodLabels(const specs::AppDef& app, int role_idx, int replica_id,
                                             const std::string& job_name, const std::string& torchx_version);

/// The Job manifest. kInvalidArgument for what Volcano cannot express (a ROLE retry policy in an
/// app with several roles), naming the role and the choices.
Result<nlohmann::json> AppToVolcanoJob(const specs::AppDef& app, const VolcanoJobOptions& options);

/// The app a Job was made from, as far as its manifest tells (describe): per role, replica 0's
/// task gives the image, entrypoint, args and env (macros already substituted), resource,
/// ports, mounts and retry settings; the tasks' count gives num_replicas.
specs::AppDef AppFromVolcanoJob(const nlohmann::json& job);

/// Volcano's job phases as TorchX app states (an unknown phase is UNKNOWN).
specs::AppState JobPhaseToState(const std::string& phase);
/// Volcano's task (pod) phases as replica states.
specs::AppState TaskPhaseToState(const std::string& phase);

/// Why an ended Volcano Job did not succeed, from the Job and its pods (the `items` of a pod
/// list): Aborted is cancelled; then the gravest pod cause: status.reason Evicted, or a
/// DisruptionTarget condition's EvictionByEvictionAPI (eviction); PreemptionByScheduler,
/// Preempting (preemption); NodeLost, NodeShutdown, DeletionByTaintManager, DeletionByPodGC,
/// Terminated (node_failure); DeadlineExceeded (time_limit); a container's OOMKilled
/// (out_of_memory); a container's non-zero exit (user_error). The Job's own reason naming an
/// eviction (Volcano's PodEvicted) counts as one. Otherwise unknown, with the Job's message.
FailureReport ClassifyVolcanoEnd(const nlohmann::json& job, const nlohmann::json& pods);

}  // namespace torchx::schedulers::kubernetes
