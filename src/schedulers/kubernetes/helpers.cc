#include "schedulers/kubernetes/helpers.h"

#include <cstdint>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_view.h"
#include "schedulers/kubernetes/volcano_job.h"
#include "torchx/specs/serialize.h"
#include "torchx/version.h"

namespace torchx::schedulers::kubernetes {
namespace {

using Json = nlohmann::json;
using internal::JsonView;

// A count TorchX's functions take (reserved_millicpu, ...): absent or null keeps `fallback`.
Result<int> CountArg(JsonView options, const char* key, int fallback) {
  JsonView v = options[key];
  if (!v.Exists() || v.get()->is_null()) return fallback;
  const Json& n = *v.get();
  if (!n.is_number_integer() || n.get<std::int64_t>() < 0 || n.get<std::int64_t>() > std::numeric_limits<int>::max()) {
    return InvalidArgumentError(
        fmt::format("{} must be an int from 0 to {}, got {}", key, std::numeric_limits<int>::max(), n.dump()));
  }
  return n.get<int>();
}

Result<VolcanoJobOptions> Options(JsonView args) {
  JsonView j = args["options"];
  if (j.Exists() && !j.IsObject()) return InvalidArgumentError("kubernetes helper: options: must be an object");
  VolcanoJobOptions o;
  o.job_name = j["job_name"].Str();
  o.namespace_ = j["namespace"].Str();
  o.queue = j["queue"].Str();
  o.service_account = j["service_account"].Str();
  o.priority_class = j["priority_class"].Str();
  o.torchx_version = TORCHX_VERSION_STRING;
  TORCHX_ASSIGN_OR_RETURN(o.reserved_millicpu, CountArg(j, "reserved_millicpu", o.reserved_millicpu));
  TORCHX_ASSIGN_OR_RETURN(o.reserved_memmb, CountArg(j, "reserved_memmb", o.reserved_memmb));
  if (JsonView efa = j["efa_device_count"]; efa.Exists() && !efa.get()->is_null()) {
    TORCHX_ASSIGN_OR_RETURN(int count, CountArg(j, "efa_device_count", 0));
    o.efa_device_count = count;
  }
  return o;
}

Result<specs::AppDef> App(JsonView args) {
  if (!args["app"].IsObject()) return InvalidArgumentError("kubernetes helper: app: must be an AppDef object");
  return specs::AppDefFromJson(args["app"].get()->dump());
}

}  // namespace

Result<std::string> KubernetesHelper(std::string_view function, std::string_view args_json) {
  JsonView args = JsonView::Parse(args_json);
  if (!args.IsObject()) return InvalidArgumentError("kubernetes helper: the arguments must be a JSON object");
  if (function == "job_app_part") {
    if (!args["name"].IsString()) return InvalidArgumentError("kubernetes helper: name: must be a string");
    return Json(JobNameAppPart(args["name"].Str())).dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  if (function == "role_to_pod") {
    // The role travels as the only role of an app (the canonical JSON has no role-only form).
    TORCHX_ASSIGN_OR_RETURN(specs::AppDef app, App(args));
    if (app.roles.empty()) return InvalidArgumentError("kubernetes helper: app: has no role");
    TORCHX_ASSIGN_OR_RETURN(VolcanoJobOptions options, Options(args));
    return RoleToPod(args["name"].Str(), app.roles.front(), options).dump();
  }
  if (function == "app_to_resource") {
    TORCHX_ASSIGN_OR_RETURN(specs::AppDef app, App(args));
    TORCHX_ASSIGN_OR_RETURN(VolcanoJobOptions options, Options(args));
    TORCHX_ASSIGN_OR_RETURN(Json job, AppToVolcanoJob(app, options));
    return job.dump();
  }
  if (function == "pod_labels") {
    TORCHX_ASSIGN_OR_RETURN(specs::AppDef app, App(args));
    std::int64_t role_idx = args["role_idx"].Int(-1);
    if (role_idx < 0 || static_cast<size_t>(role_idx) >= app.roles.size()) {
      return InvalidArgumentError(fmt::format("kubernetes helper: role_idx {} is not a role of the app", role_idx));
    }
    std::int64_t replica = args["replica_id"].Int(-1);
    if (replica < 0 || replica > std::numeric_limits<int>::max()) {
      return InvalidArgumentError("kubernetes helper: replica_id: must be an int from 0");
    }
    return Json(PodLabels(app, static_cast<int>(role_idx), static_cast<int>(replica), args["job"].Str(),
                          TORCHX_VERSION_STRING))
        .dump();
  }
  return NotFoundError(fmt::format(
      "scheduler kubernetes has no helper `{}`; helpers: job_app_part, role_to_pod, app_to_resource, pod_labels",
      function));
}

}  // namespace torchx::schedulers::kubernetes
