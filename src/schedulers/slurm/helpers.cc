#include "schedulers/slurm/helpers.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "schedulers/slurm/sbatch_script.h"
#include "schedulers/slurm/slurm_status.h"

namespace torchx::schedulers::slurm {

using Json = nlohmann::json;

Result<std::string> SlurmHelper(std::string_view function, std::string_view args_json) {
  if (function == "materialize") {
    TORCHX_ASSIGN_OR_RETURN(SlurmBatchRequest req, SlurmBatchRequestFromJson(std::string(args_json)));
    return Json(req.Materialize()).dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  if (function == "app_state") {
    Json state = Json::parse(args_json, nullptr, false);
    if (!state.is_string()) return InvalidArgumentError("slurm app_state: the state must be a JSON string");
    return Json(static_cast<int>(SlurmStateToAppState(state.get<std::string>()))).dump();
  }
  if (function == "states") {
    Json out = Json::object();
    for (const auto& [name, state] : SlurmStates()) out[name] = static_cast<int>(state);
    return out.dump();
  }
  return NotFoundError(
      fmt::format("scheduler slurm has no helper `{}`; helpers: materialize, app_state, states", function));
}

}  // namespace torchx::schedulers::slurm
