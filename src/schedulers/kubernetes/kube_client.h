// The Kubernetes API server's REST interface over HTTPS, authenticated as the kubeconfig says:
// no kubectl, no client library. Calls go through an internal::HttpClient (libcurl in
// production, a fake API server in unit tests).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "http/http.h"
#include "schedulers/kubernetes/kube_config.h"
#include "torchx/status.h"

namespace torchx::schedulers::kubernetes {

using internal::HttpResponse;

class KubeClient {
 public:
  KubeClient(std::shared_ptr<internal::HttpClient> http, KubeConnection connection)
      : http_(std::move(http)), c_(std::move(connection)) {}
  const KubeConnection& connection() const { return c_; }

  /// `path` starts with /api or /apis. kUnavailable naming the server and context when it
  /// cannot be reached; HTTP errors are returned as responses (see ApiError).
  Result<HttpResponse> Call(const std::string& method, const std::string& path, const std::string& body = {},
                            long timeout_ms = 30000) const;
  /// A streamed GET (followed logs): on_data gets the body as it arrives. An HTTP error status
  /// comes back as its response, with the body kept.
  Result<HttpResponse> Stream(const std::string& path, const std::function<bool(std::string_view)>& on_data) const;

 private:
  std::shared_ptr<internal::HttpClient> http_;
  KubeConnection c_;
};

/// An error response as a Status: the API server's own message (a v1 Status object) and code
/// mapped (404 kNotFound, 409 kAlreadyExists, 401/403 kPermissionDenied, 400/422
/// kInvalidArgument, else kUnavailable), prefixed with `what`.
Status ApiError(const HttpResponse& response, std::string_view what);

}  // namespace torchx::schedulers::kubernetes
