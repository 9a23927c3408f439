#include "schedulers/kubernetes/kube_client.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace torchx::schedulers::kubernetes {

Result<HttpResponse> KubeClient::Call(const std::string& method, const std::string& path, const std::string& body,
                                      long timeout_ms) const {
  internal::HttpRequest r{method, c_.server + path, body, "application/json", timeout_ms, {}};
  return http_->Call(c_.transport, r,
                     fmt::format("kubernetes API server {} (context `{}` of {}) cannot be reached", c_.server,
                                 c_.context, c_.source));
}

Result<HttpResponse> KubeClient::Stream(const std::string& path,
                                        const std::function<bool(std::string_view)>& on_data) const {
  internal::HttpRequest r{"GET", c_.server + path, "", "application/json", 0, {}};
  return http_->Stream(c_.transport, r, fmt::format("kubernetes API server {}", c_.server), on_data);
}

Status ApiError(const HttpResponse& response, std::string_view what) {
  auto body = nlohmann::json::parse(response.body, nullptr, false);
  std::string message = body.is_object() && body.contains("message") && body["message"].is_string()
                            ? body["message"].get<std::string>()
                            : response.body.substr(0, 300);
  std::string text = fmt::format("{}: HTTP {}: {}", what, response.status, message);
  switch (response.status) {
    case 404: return NotFoundError(text);
    case 409: return AlreadyExistsError(text);
    case 401:
    case 403: return Status(StatusCode::kPermissionDenied, text);
    case 400:
    case 422: return InvalidArgumentError(text);
    default: return UnavailableError(text);
  }
}

}  // namespace torchx::schedulers::kubernetes
