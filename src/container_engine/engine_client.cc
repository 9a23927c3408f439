#include "container_engine/engine_client.h"

#include <cstdlib>

#include <fmt/format.h>

namespace torchx::container_engine {
namespace {

constexpr const char* kApiUrl = "http://localhost/v1.41";

}  // namespace

EngineClient::EngineClient(std::shared_ptr<internal::HttpClient> http, std::string socket_path)
    : http_(std::move(http)) {
  if (socket_path.empty()) {
    const char* host = std::getenv("DOCKER_HOST");
    std::string h = host ? host : "";
    socket_path = h.rfind("unix://", 0) == 0 ? h.substr(7) : "/var/run/docker.sock";
  }
  transport_.unix_socket = std::move(socket_path);
}

Result<HttpResponse> EngineClient::Request(const std::string& method, const std::string& path, const std::string& body,
                                           long timeout_ms, const std::string& content_type,
                                           std::vector<std::string> headers) const {
  internal::HttpRequest r{method, kApiUrl + path, body, content_type, timeout_ms, std::move(headers)};
  return http_->Call(transport_, r,
                     fmt::format("container engine at unix://{} cannot be reached (is dockerd or `podman "
                                 "system service` running? set DOCKER_HOST=unix://<socket>)",
                                 transport_.unix_socket));
}

Result<long> EngineClient::Stream(const std::string& path, const std::function<bool(std::string_view)>& on_data) const {
  internal::HttpRequest r{"GET", kApiUrl + path, "", "application/json", 0, {}};
  std::string what = fmt::format("container engine at unix://{}", transport_.unix_socket);
  TORCHX_ASSIGN_OR_RETURN(auto resp, http_->Stream(transport_, r, what, on_data));
  return resp.status;
}

}  // namespace torchx::container_engine
