#include "schedulers/ray/ray_request.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "torchx/specs/macros.h"
#include "torchx/specs/serialize.h"
#include "torchx/version.h"

namespace torchx::schedulers::ray {
namespace fs = std::filesystem;
namespace {

using Json = nlohmann::json;

std::string DumpJson(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

Json Bundle(const specs::Resource& r) {
  Json b = Json::object();
  if (r.cpu > 0) b["cpu"] = r.cpu;
  if (r.gpu > 0) b["gpu"] = r.gpu;
  if (r.memMB > 0) b["memory"] = static_cast<long long>(r.memMB) * 1024 * 1024;
  Json custom = Json::object();
  for (const auto& [name, count] : r.devices) {
    if (count > 0) custom[name] = count;  // a device is a custom resource of the same name on the nodes that have it
  }
  b["custom"] = custom;
  return b;
}

}  // namespace

std::string RayAppId(std::string_view address, std::string_view submission_id) {
  return fmt::format("{}-{}", address, submission_id);
}

Result<std::pair<std::string, std::string>> ParseRayAppId(std::string_view app_id) {
  // host:port-<id>: the first ":<digits>-" ends the address (a host may hold '-', the port may not).
  for (size_t colon = app_id.find(':'); colon != std::string_view::npos; colon = app_id.find(':', colon + 1)) {
    size_t end = colon + 1;
    while (end < app_id.size() && app_id[end] >= '0' && app_id[end] <= '9') ++end;
    if (end > colon + 1 && end < app_id.size() && app_id[end] == '-' && end + 1 < app_id.size() && colon > 0) {
      // The id names a file of this launcher's (the job's record) and the host gets the auth token:
      // both only in the forms this scheduler makes.
      std::string_view host = app_id.substr(0, colon), sid = app_id.substr(end + 1);
      auto host_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-'; };
      auto id_char = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
      };
      if (!std::all_of(host.begin(), host.end(), host_char) || !std::all_of(sid.begin(), sid.end(), id_char) ||
          sid.front() == '.') {
        break;
      }
      return std::make_pair(std::string(app_id.substr(0, end)), std::string(sid));
    }
  }
  return InvalidArgumentError(fmt::format("ray: app id `{}` is not `<dashboard host:port>-<submission id>`", app_id));
}

Result<std::string> NormalizeAddress(std::string_view address, std::string_view field) {
  std::string_view a = address;
  if (a.starts_with("http://")) a.remove_prefix(7);
  while (a.ends_with('/')) a.remove_suffix(1);
  size_t colon = a.rfind(':');
  bool has_port =
      colon != std::string_view::npos && colon > 0 && colon + 1 < a.size() &&
      std::all_of(a.begin() + static_cast<long>(colon) + 1, a.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (a.empty() || a.find("://") != std::string_view::npos || a.find('/') != std::string_view::npos || !has_port) {
    return InvalidArgumentError(fmt::format(
        "ray: {} `{}` is not a dashboard address: want `host:port` or `http://host:port` (the Job Submission API, "
        "port 8265 by default); ray:// and GCS addresses are not reachable over it",
        field, address));
  }
  return std::string(a);
}

Result<std::vector<std::string>> ReadRequirements(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgumentError(fmt::format("ray: requirements `{}` cannot be read", path));
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    // pip's comments: a '#' that starts the line or follows whitespace (not `...#egg=`, `--hash`).
    for (size_t hash = line.find('#'); hash != std::string::npos; hash = line.find('#', hash + 1)) {
      if (hash == 0 || line[hash - 1] == ' ' || line[hash - 1] == '\t') {
        line.erase(hash);
        break;
      }
    }
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

Result<RayRequest> BuildRayRequest(const specs::AppDef& app, const RayOptions& options,
                                   const std::string& submission_id, const std::string& session) {
  if (std::find(std::begin(kStrategies), std::end(kStrategies), options.placement_strategy) == std::end(kStrategies)) {
    return InvalidArgumentError(
        fmt::format("ray: placement_strategy `{}` is not one of SPREAD, PACK, STRICT_SPREAD, STRICT_PACK",
                    options.placement_strategy));
  }
  if (options.reschedule_timeout_s <= 0) {
    return InvalidArgumentError(
        fmt::format("ray: reschedule_timeout `{}` must be a positive number of seconds", options.reschedule_timeout_s));
  }
  RayRequest req;
  req.address = options.address;
  req.submission_id = submission_id;
  Json roles = Json::array();
  for (const specs::Role& role : app.roles) {
    if (!role.mounts.empty()) {
      return InvalidArgumentError(fmt::format(
          "ray: role `{}` has mounts: a Ray job cannot mount anything (a role's files come from its image directory)",
          role.name));
    }
    std::error_code ec;
    if (!fs::is_directory(role.image, ec)) {
      return InvalidArgumentError(fmt::format(
          "ray: role `{}` image `{}` is not a local directory: the ray scheduler uploads a role's image directory as "
          "the job's working_dir (pass --workspace DIR, or a directory as the image)",
          role.name, role.image));
    }
    std::string dir = fs::absolute(role.image).lexically_normal().string();
    if (!req.working_dir.empty() && dir != req.working_dir) {
      return InvalidArgumentError(
          fmt::format("ray: role `{}` image `{}` differs from another role's `{}`: a Ray job has one working_dir",
                      role.name, role.image, req.working_dir));
    }
    req.working_dir = dir;
    Json replicas = Json::array();
    for (int i = 0; i < role.num_replicas; ++i) {
      // ${img_root} is the working directory each replica starts in: ".".
      specs::macros::Values values{".", submission_id, std::to_string(i), "TORCHX_RANK0_HOST"};
      specs::Role r = values.Apply(role);
      Json argv = Json::array({r.entrypoint});
      for (const std::string& a : r.args) argv.push_back(a);
      Json env = Json::object();
      for (const auto& [k, v] : r.env) env[k] = v;
      replicas.push_back({{"argv", argv}, {"env", env}});
    }
    roles.push_back({{"name", role.name},
                     {"max_retries", role.max_retries},
                     {"retry_policy", std::string(specs::RetryPolicyName(role.retry_policy))},
                     {"resource", Bundle(role.resource)},
                     {"replicas", replicas}});
  }
  Json spec = {{"app_id", submission_id},
               {"placement_strategy", options.placement_strategy},
               {"reschedule_timeout_s", options.reschedule_timeout_s},
               {"roles", roles}};
  req.spec_json = DumpJson(spec, 1);
  if (options.requirements) {
    TORCHX_ASSIGN_OR_RETURN(req.pip, ReadRequirements(*options.requirements));
  } else if (fs::path reqs = fs::path(req.working_dir) / "requirements.txt";
             !req.working_dir.empty() && fs::exists(reqs)) {
    TORCHX_ASSIGN_OR_RETURN(req.pip, ReadRequirements(reqs.string()));  // TorchX's default: the workspace's
  }
  req.metadata = {{std::string(kMetadataLauncher), fmt::format("torchx {}", TORCHX_VERSION_STRING)},
                  {std::string(kMetadataSession), session},
                  {"torchx.app_name", app.name},
                  {std::string(kMetadataApp), specs::AppDefToJson(app, -1)}};
  return req;
}

std::string RayRequestToJson(const RayRequest& r) {
  return DumpJson({{"address", r.address},
                   {"cluster_config_file", r.cluster_config_file},
                   {"cluster_name", r.cluster_name},
                   {"submission_id", r.submission_id},
                   {"working_dir", r.working_dir},
                   {"pip", r.pip},
                   {"spec", r.spec_json},
                   {"metadata", r.metadata}});
}

Result<RayRequest> RayRequestFromJson(std::string_view json) {
  Json j = Json::parse(json, nullptr, false);
  if (!j.is_object()) return InvalidArgumentError("ray: the dry run's payload is not a JSON object");
  try {
    RayRequest r;
    r.address = j.at("address").get<std::string>();
    r.cluster_config_file = j.value("cluster_config_file", "");
    r.cluster_name = j.value("cluster_name", "");
    r.submission_id = j.at("submission_id").get<std::string>();
    r.working_dir = j.at("working_dir").get<std::string>();
    r.pip = j.at("pip").get<std::vector<std::string>>();
    r.spec_json = j.at("spec").get<std::string>();
    r.metadata = j.at("metadata").get<std::map<std::string, std::string>>();
    return r;
  } catch (const Json::exception& e) {
    return InvalidArgumentError(fmt::format("ray: the dry run's payload is not a ray request: {}", e.what()));
  }
}

std::string RayRequestText(const RayRequest& r) {
  std::string where =
      r.address.empty() ? fmt::format("the head of {}", r.cluster_config_file) : fmt::format("http://{}", r.address);
  std::string out =
      fmt::format("ray job {} on {}\n  entrypoint: python3 -m torchx_ray_driver\n", r.submission_id, where);
  if (!r.working_dir.empty()) out += fmt::format("  working_dir: {}\n", r.working_dir);
  if (!r.pip.empty()) out += fmt::format("  pip: {}\n", DumpJson(r.pip));
  out += "  driver spec:\n" + r.spec_json + "\n";
  return out;
}

}  // namespace torchx::schedulers::ray
