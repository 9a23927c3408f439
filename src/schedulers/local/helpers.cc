#include "schedulers/local/helpers.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_view.h"
#include "schedulers/local/app_plan.h"
#include "torchx/specs/serialize.h"

namespace torchx::schedulers::local {
namespace {

using Json = nlohmann::json;
using internal::JsonView;

Result<PlanInputs> Inputs(JsonView j) {
  if (!j.IsObject()) return InvalidArgumentError("local helper: inputs: must be an object");
  PlanInputs in;
  for (auto [key, field] : {std::pair{"app_id", &in.app_id}, std::pair{"session", &in.session},
                            std::pair{"cwd", &in.cwd}, std::pair{"log_dir", &in.log_dir}}) {
    if (!j[key].IsString()) return InvalidArgumentError(fmt::format("local helper: inputs.{}: must be a string", key));
    *field = j[key].Str();
  }
  in.prepend_cwd = j["prepend_cwd"].Bool(false);
  in.auto_set_cuda_visible_devices = j["auto_set_cuda_visible_devices"].Bool(false);
  std::int64_t gpus = j["visible_gpus"].Int(0);
  if (gpus < 0 || gpus > (1 << 20)) return InvalidArgumentError("local helper: inputs.visible_gpus: must be >= 0");
  in.visible_gpus = static_cast<int>(gpus);
  JsonView role_dirs = j["role_dirs"];
  if (role_dirs.Exists() && !role_dirs.IsObject()) {
    return InvalidArgumentError("local helper: inputs.role_dirs: must be an object");
  }
  if (role_dirs.IsObject()) {
    for (const auto& [role, dirs] : role_dirs.get()->items()) {
      JsonView d(dirs);
      if (!d["img_root"].IsString() || !d["cwd"].IsString()) {
        return InvalidArgumentError(
            fmt::format("local helper: inputs.role_dirs.{}: must be {{\"img_root\": str, \"cwd\": str}}", role));
      }
      in.role_dirs[role] = {d["img_root"].Str(), d["cwd"].Str()};
    }
  }
  return in;
}

}  // namespace

Result<std::string> LocalHelper(std::string_view function, std::string_view args_json) {
  if (function != "plan") {
    return NotFoundError(fmt::format("scheduler local_cwd has no helper `{}`; helpers: plan", function));
  }
  JsonView args = JsonView::Parse(args_json);
  if (!args.IsObject()) return InvalidArgumentError("local helper: the arguments must be a JSON object");
  if (!args["app"].IsObject()) return InvalidArgumentError("local helper: app: must be an AppDef object");
  TORCHX_ASSIGN_OR_RETURN(specs::AppDef app, specs::AppDefFromJson(args["app"].get()->dump()));
  TORCHX_ASSIGN_OR_RETURN(PlanInputs in, Inputs(args["inputs"]));
  TORCHX_ASSIGN_OR_RETURN(AppPlan plan, BuildAppPlan(app, in));
  return Json{
      {"plan", Json::parse(AppPlanToJson(plan))}, {"printable", RenderAppPlan(plan)}, {"warnings", plan.warnings}}
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace torchx::schedulers::local
