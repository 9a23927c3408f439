#include "schedulers/kubernetes/kubernetes_request.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace torchx::schedulers::kubernetes {
namespace {
using Json = nlohmann::json;
}  // namespace

std::string KubernetesRequestToJson(const KubernetesRequest& request) {
  return Json{{"namespace", request.ns}, {"job", Json::parse(request.job_json, nullptr, false)}, {"push", request.push}}
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<KubernetesRequest> KubernetesRequestFromJson(std::string_view payload) {
  auto bad = [](std::string_view field, std::string_view why) {
    return InvalidArgumentError(fmt::format("kubernetes request: {}: {}", field, why));
  };
  auto non_empty_string = [](const Json& j, std::string_view key) -> const std::string* {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) return nullptr;
    return &it->get_ref<const std::string&>();
  };
  Json j = Json::parse(payload, nullptr, false);
  if (!j.is_object()) return InvalidArgumentError("kubernetes request: not a JSON object");
  KubernetesRequest req;
  const std::string* ns = non_empty_string(j, "namespace");
  if (!ns) return bad("namespace", "must be a non-empty string");
  req.ns = *ns;
  auto job = j.find("job");
  if (job == j.end() || !job->is_object()) return bad("job", "must be an object (a Volcano Job)");
  auto metadata = job->find("metadata");
  if (metadata == job->end() || !metadata->is_object()) return bad("job.metadata", "must be an object");
  const std::string* name = non_empty_string(*metadata, "name");
  if (!name) return bad("job.metadata.name", "must be a non-empty string");
  req.job_name = *name;
  req.job_json = job->dump(-1, ' ', false, Json::error_handler_t::replace);
  if (auto push = j.find("push"); push != j.end() && !push->is_null()) {
    if (!push->is_array()) return bad("push", "must be a list of images");
    for (size_t i = 0; i < push->size(); ++i) {
      const Json& image = (*push)[i];
      std::string at = fmt::format("push[{}]", i);
      if (!image.is_string()) return bad(at, "must be an image `repo:tag`");
      const std::string& ref = image.get_ref<const std::string&>();
      size_t colon = ref.rfind(':');
      size_t slash = ref.rfind('/');
      if (colon == std::string::npos || colon == 0 || colon + 1 == ref.size() ||
          (slash != std::string::npos && slash > colon)) {
        return bad(at, fmt::format("'{}' is not an image `repo:tag`", ref));
      }
      req.push.push_back(ref);
    }
  }
  return req;
}

}  // namespace torchx::schedulers::kubernetes
