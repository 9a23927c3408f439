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
#include "torchx/clock.h"
#include "torchx/status.h"

namespace torchx::schedulers::kubernetes {

using internal::HttpResponse;

/// How a call is retried when the API server is unreachable or answers 429 or 5xx: bounded
/// attempts with exponential backoff (the server's retryAfterSeconds where it gives one).
struct RetryPolicy {
  int attempts = 5;
  std::chrono::milliseconds first_backoff{250};
  std::chrono::milliseconds max_backoff{4000};
  std::chrono::seconds max_retry_after{30};
};

class KubeClient {
 public:
  KubeClient(std::shared_ptr<internal::HttpClient> http, KubeConnection connection,
             std::shared_ptr<const Clock> clock = nullptr, RetryPolicy retry = {});
  const KubeConnection& connection() const { return c_; }

  /// `path` starts with /api or /apis. kUnavailable naming the server and context when it
  /// cannot be reached; HTTP errors are returned as responses (see ApiError). Safe calls
  /// (GET, DELETE: doing them twice is doing them once) are retried on a refused connection, a
  /// timeout, 429 and 500/502/503/504; other methods are sent once.
  /// `maybe_applied` (safe calls): set when an earlier attempt may have reached the server, so
  /// a DELETE's 404 on the retry means done, not missing.
  Result<HttpResponse> Call(const std::string& method, const std::string& path, const std::string& body = {},
                            long timeout_ms = 30000, bool* maybe_applied = nullptr) const;

  /// A POST that creates a named object, retried as above. A retry may find the object already
  /// there because an earlier attempt did reach the server (a timeout or a 5xx after it took the
  /// request): `*maybe_created` is then set, and a 409 means "ours", not a clash.
  Result<HttpResponse> Create(const std::string& path, const std::string& body, bool* maybe_created) const;
  /// A streamed GET (followed logs): on_data gets the body as it arrives. An HTTP error status
  /// comes back as its response, with the body kept.
  Result<HttpResponse> Stream(const std::string& path, const std::function<bool(std::string_view)>& on_data) const;

 private:
  Result<HttpResponse> WithRetries(const std::string& method, const std::string& path, const std::string& body,
                                   long timeout_ms, bool* maybe_created) const;
  std::shared_ptr<internal::HttpClient> http_;
  KubeConnection c_;
  std::shared_ptr<const Clock> clock_;
  RetryPolicy retry_;
};

/// An error response as a Status: the API server's own message (a v1 Status object) and code
/// mapped (404 kNotFound, 409 kAlreadyExists, 401/403 kPermissionDenied, 400/422
/// kInvalidArgument, else kUnavailable), prefixed with `what`.
Status ApiError(const HttpResponse& response, std::string_view what);

}  // namespace torchx::schedulers::kubernetes
