// A client of the Docker Engine HTTP API (which podman serves too) over the engine's unix socket,
// through an internal::HttpClient (libcurl in production, a fake in unit tests): no docker CLI.
// The socket is $DOCKER_HOST (unix://...) or /var/run/docker.sock.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "http/http.h"
#include "torchx/status.h"

namespace torchx::container_engine {

using internal::HttpResponse;
using internal::UrlEncode;

class EngineClient {
 public:
  /// Every request goes through `http` (MakeCurlHttpClient() for a real engine). `socket_path`
  /// empty: from $DOCKER_HOST, else /var/run/docker.sock.
  explicit EngineClient(std::shared_ptr<internal::HttpClient> http, std::string socket_path = {});
  const std::string& socket_path() const { return transport_.unix_socket; }

  /// kUnavailable when the engine cannot be reached (naming the socket). The path is appended to
  /// the API version prefix (/v1.41).
  Result<HttpResponse> Request(const std::string& method, const std::string& path, const std::string& body = {},
                               long timeout_ms = 60000, const std::string& content_type = "application/json",
                               std::vector<std::string> headers = {}) const;
  /// Streams a response body to `on_data` (return false to stop), e.g. followed logs.
  Result<long> Stream(const std::string& path, const std::function<bool(std::string_view)>& on_data) const;

 private:
  std::shared_ptr<internal::HttpClient> http_;
  internal::HttpTransport transport_;
};

}  // namespace torchx::container_engine
