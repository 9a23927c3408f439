#include "schedulers/local/app_plan.h"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/pystr.h"
#include "torchx/specs/macros.h"

namespace torchx::schedulers::local {
namespace {

using Json = nlohmann::json;

std::string JoinPath(std::vector<std::string> parts) {
  std::string out;
  for (const std::string& p : parts) {
    if (p.empty()) continue;
    out += (out.empty() ? "" : ":") + p;
  }
  return out;
}

}  // namespace

Result<AppPlan> BuildAppPlan(const specs::AppDef& app, const PlanInputs& in) {
  AppPlan plan;
  plan.app_id = in.app_id;
  plan.app_dir = (std::filesystem::path(in.log_dir) / in.session / in.app_id).string();
  plan.kill_grace_seconds = in.kill_grace_seconds;
  plan.resource_interval = in.resource_interval;

  long long replicas = 0;
  for (const specs::Role& role : app.roles) replicas += role.num_replicas;
  if (in.max_replicas > 0 && replicas > in.max_replicas) {
    return InvalidArgumentError(
        fmt::format("num_replicas: the app has {} replicas in all; the local scheduler can run at most {} at once on "
                    "this host (five open files each, within the open-file limit `ulimit -Hn`)",
                    replicas, in.max_replicas));
  }
  int gpus_needed = 0;
  for (const specs::Role& role : app.roles) gpus_needed += std::max(0, role.resource.gpu) * role.num_replicas;
  if (in.auto_set_cuda_visible_devices && gpus_needed > in.visible_gpus) {
    return InvalidArgumentError(
        fmt::format("auto_set_cuda_visible_devices: the app asks for {} GPUs in all but this host has {}", gpus_needed,
                    in.visible_gpus));
  }
  if (in.device) {
    for (const specs::Role& role : app.roles) {
      if (role.num_replicas > in.device_chips) {
        return InvalidArgumentError(
            fmt::format("device {}: role {} has {} replicas but this host has {} {} chips (one process per chip)",
                        in.device->name, role.name, role.num_replicas, in.device_chips, in.device->name));
      }
    }
  }
  int next_gpu = 0;
  for (const specs::Role& role : app.roles) {
    plan.roles[role.name] = RolePolicy{role.max_retries, role.retry_policy};
    auto dir = in.role_dirs.find(role.name);
    const std::string& img_root = dir == in.role_dirs.end() ? in.cwd : dir->second.img_root;
    const std::string& cwd = dir == in.role_dirs.end() ? in.cwd : dir->second.cwd;
    for (int i = 0; i < role.num_replicas; ++i) {
      specs::macros::Values values{img_root, in.app_id, std::to_string(i), "TORCHX_RANK0_HOST"};
      specs::Role r = values.Apply(role);
      ReplicaPlan rp;
      rp.role = role.name;
      rp.replica_id = i;
      rp.cwd = cwd;
      rp.log_dir = (std::filesystem::path(plan.app_dir) / role.name / std::to_string(i)).string();
      rp.error_file = (std::filesystem::path(rp.log_dir) / "error.json").string();
      rp.argv.push_back(r.entrypoint);
      rp.argv.insert(rp.argv.end(), r.args.begin(), r.args.end());
      rp.env = r.env;
      rp.env["TORCHX_RANK0_HOST"] = "localhost";
      rp.env.emplace("TORCHELASTIC_ERROR_FILE", rp.error_file);
      rp.env.emplace("PET_LOG_DIR", (std::filesystem::path(plan.app_dir) / "torchelastic" / role.name).string());
      // The request holds only the app's PATH (TorchX HEAD's rule: the working directory after the
      // role's PATH, or before it with prepend_cwd); the launcher appends the environment's PATH
      // at exec time, as it sets PYTHONUNBUFFERED.
      std::string role_path = r.env.count("PATH") ? r.env.at("PATH") : "";
      std::string path = in.prepend_cwd ? JoinPath({cwd, role_path}) : JoinPath({role_path, cwd});
      if (path.empty()) {
        rp.env.erase("PATH");
      } else {
        rp.env["PATH"] = path;
      }
      if (in.auto_set_cuda_visible_devices && role.resource.gpu > 0) {
        std::string devices;
        for (int g = 0; g < role.resource.gpu; ++g) devices += (g ? "," : "") + std::to_string(next_gpu++);
        rp.env["CUDA_VISIBLE_DEVICES"] = devices;
      }
      if (in.device) {
        for (auto& [k, v] : devices::DeviceEnv(*in.device, i, role.num_replicas, in.device_chips)) rp.env[k] = v;
      }
      plan.replicas.push_back(std::move(rp));
    }
  }
  return plan;
}

std::string AppPlanToJson(const AppPlan& plan) {
  Json replicas = Json::array();
  for (const ReplicaPlan& r : plan.replicas) {
    replicas.push_back({{"role", r.role},
                        {"replica_id", r.replica_id},
                        {"argv", r.argv},
                        {"env", r.env},
                        {"cwd", r.cwd},
                        {"log_dir", r.log_dir},
                        {"error_file", r.error_file}});
  }
  Json roles = Json::object();
  for (const auto& [name, p] : plan.roles) {
    roles[name] = {{"max_retries", p.max_retries}, {"retry_policy", specs::RetryPolicyName(p.retry_policy)}};
  }
  return Json{{"app_id", plan.app_id},
              {"app_dir", plan.app_dir},
              {"kill_grace_seconds", plan.kill_grace_seconds},
              {"resource_interval", plan.resource_interval},
              {"replicas", replicas},
              {"roles", roles}}
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<AppPlan> AppPlanFromJson(const std::string& json) {
  try {
    Json j = Json::parse(json);
    AppPlan plan;
    plan.app_id = j.at("app_id");
    plan.app_dir = j.at("app_dir");
    plan.kill_grace_seconds = j.at("kill_grace_seconds");
    plan.resource_interval = j.value("resource_interval", 0.0);  // plans written before sampling: none
    for (const Json& r : j.at("replicas")) {
      ReplicaPlan rp;
      rp.role = r.at("role");
      rp.replica_id = r.at("replica_id");
      rp.argv = r.at("argv").get<std::vector<std::string>>();
      rp.env = r.at("env").get<std::map<std::string, std::string>>();
      rp.cwd = r.at("cwd");
      rp.log_dir = r.at("log_dir");
      rp.error_file = r.at("error_file");
      plan.replicas.push_back(std::move(rp));
    }
    for (const auto& [name, p] : j.at("roles").items()) {
      TORCHX_ASSIGN_OR_RETURN(specs::RetryPolicy policy,
                              specs::ParseRetryPolicy(p.at("retry_policy").get<std::string>()));
      plan.roles[name] = RolePolicy{p.at("max_retries").get<int>(), policy};
    }
    return plan;
  } catch (const Json::exception& e) {
    return InternalError(fmt::format("local: corrupt app plan: {}", e.what()));
  }
}

std::string RenderAppPlan(const AppPlan& plan) {
  std::string out = fmt::format("app_id: {}\nlog dir: {}\n", plan.app_id, plan.app_dir);
  for (const ReplicaPlan& r : plan.replicas) {
    std::string cmd;
    for (const std::string& a : r.argv) cmd += (cmd.empty() ? "" : " ") + ::torchx::internal::ShlexQuote(a);
    out += fmt::format("{}/{}:\n  cmd: {}\n  cwd: {}\n  env:\n", r.role, r.replica_id, cmd, r.cwd);
    for (const auto& [k, v] : r.env) out += fmt::format("    {}={}\n", k, v);
  }
  return out;
}

}  // namespace torchx::schedulers::local
