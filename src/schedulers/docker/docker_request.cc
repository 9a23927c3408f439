#include "schedulers/docker/docker_request.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace torchx::schedulers::docker {

using Json = nlohmann::json;

std::string DockerRequestToJson(const DockerRequest& request) {
  Json containers = Json::array();
  for (const DockerContainerRequest& c : request.containers) {
    containers.push_back({{"name", c.name}, {"config", Json::parse(c.config_json, nullptr, false)}});
  }
  return Json{{"app_id", request.app_id}, {"containers", containers}}.dump(-1, ' ', false,
                                                                           Json::error_handler_t::replace);
}

Result<DockerRequest> DockerRequestFromJson(std::string_view payload) {
  auto bad = [](const std::string& field, std::string_view why) {
    return InvalidArgumentError(fmt::format("local_docker request: {}: {}", field, why));
  };
  Json j = Json::parse(payload, nullptr, false);
  if (!j.is_object()) return InvalidArgumentError("local_docker request: not a JSON object");
  DockerRequest req;
  auto app_id = j.find("app_id");
  if (app_id == j.end() || !app_id->is_string() || app_id->get_ref<const std::string&>().empty()) {
    return bad("app_id", "must be a non-empty string");
  }
  req.app_id = app_id->get<std::string>();
  auto containers = j.find("containers");
  if (containers == j.end() || !containers->is_array() || containers->empty()) {
    return bad("containers", "must be a non-empty list");
  }
  for (size_t i = 0; i < containers->size(); ++i) {
    const Json& c = (*containers)[i];
    std::string at = fmt::format("containers[{}]", i);
    if (!c.is_object()) return bad(at, "must be an object with name and config");
    auto name = c.find("name");
    if (name == c.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
      return bad(at + ".name", "must be a non-empty string");
    }
    auto config = c.find("config");
    if (config == c.end() || !config->is_object()) return bad(at + ".config", "must be an object");
    auto image = config->find("Image");
    if (image == config->end() || !image->is_string() || image->get_ref<const std::string&>().empty()) {
      return bad(at + ".config.Image", "must be a non-empty string");
    }
    req.containers.push_back({name->get<std::string>(), config->dump(-1, ' ', false, Json::error_handler_t::replace)});
  }
  return req;
}

}  // namespace torchx::schedulers::docker
