// SlurmBatchRequest <-> JSON: the dry run's payload, which Python's SlurmBatchRequest edits.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "schedulers/slurm/sbatch_script.h"

namespace torchx::schedulers::slurm {

using Json = nlohmann::json;

std::string SlurmBatchRequestToJson(const SlurmBatchRequest& request) {
  Json replicas = Json::array();
  for (const SlurmReplicaRequest& r : request.replicas) {
    replicas.push_back(
        {{"name", r.name}, {"sbatch_opts", r.sbatch_opts}, {"srun_opts", r.srun_opts}, {"command", r.command}});
  }
  return Json{{"cmd", request.cmd},         {"replicas", replicas},           {"max_retries", request.max_retries},
              {"job_dir", request.job_dir}, {"workspace", request.workspace}, {"push", request.push}}
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<SlurmBatchRequest> SlurmBatchRequestFromJson(const std::string& json) {
  Json j = Json::parse(json, nullptr, false);
  if (!j.is_object()) return InvalidArgumentError("slurm request: not a JSON object");
  auto strings = [](const Json& v, const std::string& field) -> Result<std::vector<std::string>> {
    if (!v.is_array()) return InvalidArgumentError(fmt::format("slurm request: {}: must be a list of strings", field));
    std::vector<std::string> out;
    for (const Json& s : v) {
      if (!s.is_string()) {
        return InvalidArgumentError(fmt::format("slurm request: {}: must be a list of strings", field));
      }
      out.push_back(s.get<std::string>());
    }
    return out;
  };
  SlurmBatchRequest req;
  TORCHX_ASSIGN_OR_RETURN(req.cmd, strings(j.value("cmd", Json()), "cmd"));
  if (req.cmd.empty()) return InvalidArgumentError("slurm request: cmd: empty (sbatch and its options)");
  const Json& max_retries = j.value("max_retries", Json(0));
  if (!max_retries.is_number_integer() || max_retries.get<int>() < 0) {
    return InvalidArgumentError("slurm request: max_retries: must be an integer >= 0");
  }
  req.max_retries = max_retries.get<int>();
  const Json& job_dir = j.value("job_dir", Json(""));
  if (!job_dir.is_string()) return InvalidArgumentError("slurm request: job_dir: must be a string");
  req.job_dir = job_dir.get<std::string>();
  const Json& workspace = j.value("workspace", Json(""));
  if (!workspace.is_string()) return InvalidArgumentError("slurm request: workspace: must be a string");
  req.workspace = workspace.get<std::string>();
  TORCHX_ASSIGN_OR_RETURN(req.push, strings(j.value("push", Json::array()), "push"));
  for (const std::string& image : req.push) {
    size_t colon = image.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == image.size() ||
        image.find('/', colon) != std::string::npos) {
      return InvalidArgumentError(fmt::format("slurm request: push: `{}` is not repo:tag", image));
    }
  }
  const Json& replicas = j.value("replicas", Json());
  if (!replicas.is_array() || replicas.empty()) {
    return InvalidArgumentError("slurm request: replicas: must be a non-empty list");
  }
  for (size_t i = 0; i < replicas.size(); ++i) {
    const Json& r = replicas[i];
    std::string at = fmt::format("replicas[{}]", i);
    if (!r.is_object() || !r.value("name", Json()).is_string()) {
      return InvalidArgumentError(fmt::format("slurm request: {}.name: must be a string", at));
    }
    SlurmReplicaRequest rep;
    rep.name = r["name"].get<std::string>();
    TORCHX_ASSIGN_OR_RETURN(rep.sbatch_opts, strings(r.value("sbatch_opts", Json()), at + ".sbatch_opts"));
    TORCHX_ASSIGN_OR_RETURN(rep.srun_opts, strings(r.value("srun_opts", Json()), at + ".srun_opts"));
    TORCHX_ASSIGN_OR_RETURN(rep.command, strings(r.value("command", Json()), at + ".command"));
    if (rep.command.empty()) return InvalidArgumentError(fmt::format("slurm request: {}.command: empty", at));
    req.replicas.push_back(std::move(rep));
  }
  return req;
}

}  // namespace torchx::schedulers::slurm
