// What a `ray` dry run builds (pure: no cluster contact): the driver's spec (every replica's
// argv and env, macros applied; each role's bundle), the working directory to upload, and the
// job's metadata. Schedule turns it into packages and one POST /api/jobs/.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torchx/specs/app_def.h"
#include "torchx/status.h"

namespace torchx::schedulers::ray {

/// The metadata key every job this launcher submits carries (`list` shows only those).
inline constexpr std::string_view kMetadataLauncher = "torchx.launcher";
/// The submitted AppDef (JSON), for describe.
inline constexpr std::string_view kMetadataApp = "torchx.app";
inline constexpr std::string_view kMetadataSession = "torchx.session";

/// The placement-group strategies Ray has.
inline constexpr std::string_view kStrategies[] = {"SPREAD", "PACK", "STRICT_SPREAD", "STRICT_PACK"};

struct RayOptions {
  std::string address;                      ///< the dashboard's host:port
  std::optional<std::string> requirements;  ///< a requirements.txt to pip-install for the job
  std::string placement_strategy = "SPREAD";
  int reschedule_timeout_s = 120;
};

struct RayRequest {
  std::string address;              ///< dashboard host:port; empty: learnt from the cluster config at submission
  std::string cluster_config_file;  ///< Ray's cluster config (`ray get-head-ip`), when no address
  std::string cluster_name;
  std::string submission_id;     ///< Ray's id of the job
  std::string working_dir;       ///< the local directory uploaded as the job's working_dir; empty: none
  std::vector<std::string> pip;  ///< requirements, one per entry; empty: none
  std::string spec_json;         ///< the driver's spec.json
  std::map<std::string, std::string> metadata;
};

/// "<address>-<submission id>", TorchX 0.7.0's form (the handle carries the dashboard's address).
std::string RayAppId(std::string_view address, std::string_view submission_id);
/// The address and submission id of an app id; kInvalidArgument naming the form otherwise.
Result<std::pair<std::string, std::string>> ParseRayAppId(std::string_view app_id);
/// "host:port" from a dashboard address or RAY_ADDRESS ("http://host:port", "host:port");
/// kInvalidArgument naming `field` for a ray:// or GCS address, which the REST API cannot reach.
Result<std::string> NormalizeAddress(std::string_view address, std::string_view field);

/// The request for `app` under `submission_id`. Each role's image must be a local directory (the
/// job's working_dir, one for the whole app: TorchX's rule); mounts are refused (Ray has none).
/// kInvalidArgument naming the role and field.
Result<RayRequest> BuildRayRequest(const specs::AppDef& app, const RayOptions& options,
                                   const std::string& submission_id, const std::string& session);

/// The lines of a requirements file that name something (no blanks, no comments).
Result<std::vector<std::string>> ReadRequirements(const std::string& path);

std::string RayRequestToJson(const RayRequest& request);
Result<RayRequest> RayRequestFromJson(std::string_view json);

/// The printable form of a dry run.
std::string RayRequestText(const RayRequest& request);

}  // namespace torchx::schedulers::ray
