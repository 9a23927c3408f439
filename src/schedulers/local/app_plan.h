// What the local supervisor executes: every replica's argv, environment additions, working
// directory and log files, decided at dry-run time in the submitting process (macros applied,
// TorchX's local env and PATH rules), and the retry settings. What depends on the environment the
// replica starts in (its PATH, PYTHONUNBUFFERED) is added by the launcher, as TorchX's Popen does.
// Serialized to JSON in the store.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "torchx/devices/device.h"
#include "torchx/specs/app_def.h"
#include "torchx/specs/runopts.h"
#include "torchx/status.h"

namespace torchx::schedulers::local {

struct ReplicaPlan {
  std::string role;
  int replica_id = 0;
  std::vector<std::string> argv;           ///< argv[0] is the entrypoint (looked up on PATH)
  std::map<std::string, std::string> env;  ///< set on top of the supervisor's environment
  std::string cwd;
  std::string log_dir;     ///< <app_dir>/<role>/<replica_id>
  std::string error_file;  ///< TORCHELASTIC_ERROR_FILE
  bool operator==(const ReplicaPlan&) const = default;
};

struct RolePolicy {
  int max_retries = 0;
  specs::RetryPolicy retry_policy = specs::RetryPolicy::kApplication;
};

struct AppPlan {
  std::string app_id;
  std::string app_dir;
  double kill_grace_seconds = 10;  ///< SIGTERM -> SIGKILL
  double resource_interval = 5;    ///< seconds between resource samples; 0: none taken
  std::vector<ReplicaPlan> replicas;
  std::map<std::string, RolePolicy> roles;
  /// What the plan left undone and why (the dry run prints them; not stored with the plan).
  std::vector<std::string> warnings;
};

struct PlanInputs {
  std::string app_id;
  std::string session;
  std::string cwd;  ///< the submitter's working directory (local_cwd's "image")
  /// Per role: where its image is (${img_root}) and the directory its replicas start in, when
  /// not `cwd` (TorchX's image providers: a role's image directory).
  struct RoleDirs {
    std::string img_root;
    std::string cwd;
  };
  std::map<std::string, RoleDirs> role_dirs;
  std::string log_dir;  ///< base; the app dir is <log_dir>/<session>/<app_id>
  bool prepend_cwd = false;
  bool auto_set_cuda_visible_devices = false;
  int visible_gpus = 0;  ///< GPUs on this host (for auto_set_cuda_visible_devices)
  double kill_grace_seconds = 10;
  double resource_interval = 5;
  int max_replicas = 0;  ///< refuse apps with more replicas in all (0: no limit)
  /// A device plugin (runopt `device`): replica r of a role's n gets DeviceEnv(device, r, n, chips).
  std::optional<devices::DevicePlugin> device;
  int device_chips = 0;
};

/// Builds the plan. kInvalidArgument when the app has more replicas than `max_replicas`, or when a
/// role has more replicas than the device has chips (naming both numbers). When
/// auto_set_cuda_visible_devices asks for more GPUs than the host has, no replica gets
/// CUDA_VISIBLE_DEVICES and a warning says so (TorchX's rule: the app still runs).
Result<AppPlan> BuildAppPlan(const specs::AppDef& app, const PlanInputs& in);

/// Every field of every replica: the dry run's request (`--dryrun --json`, Python's PopenRequest).
std::string AppPlanToJson(const AppPlan& plan);
/// What the store keeps: each replica as its differences from the previous one of its role, so that
/// a fan-out of identical replicas is written, stored and read in a few bytes per replica.
std::string AppPlanToStoredJson(const AppPlan& plan);
/// Either form.
Result<AppPlan> AppPlanFromJson(const std::string& json);

/// Human-readable form for `--dryrun`: per replica, the command, cwd, env and log dir.
std::string RenderAppPlan(const AppPlan& plan);

}  // namespace torchx::schedulers::local
