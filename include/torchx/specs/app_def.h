// The job-definition model: AppDef, Role, Resource, RetryPolicy and mounts.
//
// Plain value types with TorchX's fields and defaults (torchx/specs/api.py). They carry no
// scheduler-specific fields: those go through a scheduler's runopts. Copy freely; no sharing.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "torchx/status.h"
#include "torchx/value.h"

namespace torchx::specs {

/// TorchX's sentinels: a required field not yet set, and "no value".
inline constexpr std::string_view kMissing = "<MISSING>";
inline constexpr std::string_view kNone = "<NONE>";

struct Resource {
  int cpu = -1;    ///< Logical CPUs. Default: -1 (see NullResource()).
  int gpu = -1;    ///< GPUs. Default: -1.
  int memMB = -1;  ///< Memory in MiB (TorchX's spelling). Default: -1.
  /// Scheduler-interpreted hints, e.g. "node.kubernetes.io/instance-type". Default: empty.
  Value::Map capabilities;
  /// Named devices and counts, e.g. {"vpc.amazonaws.com/efa": 4}. Default: empty.
  std::map<std::string, int> devices;
  /// Non-functional bookkeeping (aliases, fractional origin). Default: empty.
  Value::Map tags;

  friend bool operator==(const Resource&, const Resource&) = default;
};

/// TorchX's NULL_RESOURCE (-1, -1, -1): validation rejects a role that still holds it.
Resource NullResource();
bool IsNullResource(const Resource& r);

enum class RetryPolicy {
  kReplica,      ///< restart only the failed replica
  kRole,         ///< restart every replica of the failed replica's role
  kApplication,  ///< restart the whole app (every scheduler supports it)
};
/// "REPLICA" / "ROLE" / "APPLICATION", TorchX's enum values.
std::string_view RetryPolicyName(RetryPolicy p);
/// Parses the names above; error names the field and the valid choices.
Result<RetryPolicy> ParseRetryPolicy(std::string_view s);

struct BindMount {
  std::string src_path;
  std::string dst_path;
  bool read_only = false;
  friend bool operator==(const BindMount&, const BindMount&) = default;
};
struct VolumeMount {
  std::string src;  ///< volume name, PVC or file-system id
  std::string dst_path;
  bool read_only = false;
  friend bool operator==(const VolumeMount&, const VolumeMount&) = default;
};
struct DeviceMount {
  std::string src_path;
  std::string dst_path;
  std::string permissions = "rwm";  ///< any of r, w, m
  friend bool operator==(const DeviceMount&, const DeviceMount&) = default;
};
using Mount = std::variant<BindMount, VolumeMount, DeviceMount>;

/// Parses the `--mounts` token list (the CLI's comma-split
/// `type=bind,src=/a,dst=/b,readonly,type=device,src=/dev/fuse`) into mounts.
/// Keys and aliases: type; src|source; dst|destination|target; readonly|read_only; perm.
/// `~` at the start of a bind src is expanded with $HOME. A device dst defaults to its src.
/// Errors (kInvalidArgument): key before the first `type`, unknown key or type (the message lists
/// the valid ones), a missing src/dst (TorchX raises a bare KeyError here; we name the mount and
/// key), a permission character other than r/w/m.
Result<std::vector<Mount>> ParseMounts(const std::vector<std::string>& tokens);
/// Host devices for a Resource's named devices (TorchX's schedulers/devices.py): EFA
/// (`vpc.amazonaws.com/efa`) -> /dev/infiniband/uverbs<i>, Neuron (`aws.amazon.com/neurondevice`)
/// -> /dev/neuron<i>, in the map's order. Names without a mapping are skipped and, if `unknown`
/// is given, listed there.
std::vector<DeviceMount> DeviceMountsFor(const std::map<std::string, int>& devices,
                                         std::vector<std::string>* unknown = nullptr);
/// Convenience: splits `spec` on ',' and calls ParseMounts.
Result<std::vector<Mount>> ParseMountsString(std::string_view spec);

struct Role {
  std::string name;                                      ///< Required.
  std::string image;                                     ///< Required (may be empty for local schedulers).
  std::string entrypoint = std::string(kMissing);        ///< Required. Default: "<MISSING>".
  std::vector<std::string> args;                         ///< Default: empty.
  std::map<std::string, std::string> env;                ///< Default: empty.
  int num_replicas = 1;                                  ///< Default: 1.
  std::optional<int> min_replicas;                       ///< Elastic lower bound. Default: unset.
  int max_retries = 0;                                   ///< Default: 0.
  RetryPolicy retry_policy = RetryPolicy::kApplication;  ///< Default: APPLICATION.
  Resource resource = NullResource();                    ///< Default: NULL_RESOURCE.
  std::map<std::string, int> port_map;                   ///< Default: empty.
  Value::Map metadata;                                   ///< `$scheduler.$key` convention. Default: empty.
  std::vector<Mount> mounts;                             ///< Default: empty.

  friend bool operator==(const Role&, const Role&) = default;
};

struct AppDef {
  std::string name;                             ///< Required.
  std::vector<Role> roles;                      ///< At least one for a valid app.
  std::map<std::string, std::string> metadata;  ///< Default: empty.

  friend bool operator==(const AppDef&, const AppDef&) = default;
};

/// Checks an AppDef before it is handed to a scheduler. kInvalidArgument naming the role and field
/// for: no roles, empty or malformed app/role names, duplicate role names, missing entrypoint,
/// num_replicas < 1, min_replicas < 0 or > num_replicas, max_retries < 0, negative cpu/gpu/memMB,
/// negative device counts or ports. A role without a resource (NULL_RESOURCE) is valid here:
/// whether it may run is the back-end's call (ValidateResources).
Status ValidateAppDef(const AppDef& app);
/// What TorchX's Runner checks of any app: roles present, each with an entrypoint and at least one
/// replica (for back-ends that check the rest themselves, Scheduler::checks_app_itself).
Status ValidateAppBasics(const AppDef& app);

/// kInvalidArgument naming the first role still holding NULL_RESOURCE. TorchX's rule for the
/// back-ends that place replicas by their resources (every one but the local scheduler).
Status ValidateResources(const AppDef& app);

}  // namespace torchx::specs
