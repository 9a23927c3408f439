#include "schedulers/kubernetes/kube_client.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace torchx::schedulers::kubernetes {

namespace {

bool Retryable(long status) {
  return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

// Whether a failed attempt can have reached the server: not when the HTTP layer says it was
// never sent (no connection made), nor when the server refused it with 429 before doing anything.
bool MayHaveReachedServer(const Result<HttpResponse>& r) {
  if (r) return r->status != 429;
  return !internal::WasNotSent(r.error());
}

// The wait a 429 or 503 asks for: a v1 Status's details.retryAfterSeconds (the API server sets
// it alongside its Retry-After header).
std::optional<std::chrono::seconds> RetryAfter(const HttpResponse& r) {
  auto body = nlohmann::json::parse(r.body, nullptr, false);
  if (!body.is_object() || !body.contains("details") || !body["details"].is_object()) return std::nullopt;
  const auto& d = body["details"];
  if (!d.contains("retryAfterSeconds") || !d["retryAfterSeconds"].is_number_integer()) return std::nullopt;
  return std::chrono::seconds(std::max<long>(0, d["retryAfterSeconds"].get<long>()));
}

}  // namespace

KubeClient::KubeClient(std::shared_ptr<internal::HttpClient> http, KubeConnection connection,
                       std::shared_ptr<const Clock> clock, RetryPolicy retry)
    : http_(std::move(http)),
      c_(std::move(connection)),
      clock_(clock ? std::move(clock) : std::make_shared<SystemClock>()),
      retry_(retry) {}

Result<HttpResponse> KubeClient::WithRetries(const std::string& method, const std::string& path,
                                             const std::string& body, long timeout_ms, bool* maybe_created) const {
  internal::HttpRequest r{method, c_.server + path, body, "application/json", timeout_ms, {}};
  std::string what =
      fmt::format("kubernetes API server {} (context `{}` of {}) cannot be reached", c_.server, c_.context, c_.source);
  std::chrono::milliseconds backoff = retry_.first_backoff;
  for (int attempt = 1;; ++attempt) {
    auto resp = http_->Call(c_.transport, r, what);
    bool again = resp ? Retryable(resp->status) : resp.error().code() == StatusCode::kUnavailable;
    if (!again || attempt >= retry_.attempts) return resp;
    // A request that may have reached the server (a timeout, a 5xx) may have been applied.
    if (maybe_created && MayHaveReachedServer(resp)) *maybe_created = true;
    std::chrono::milliseconds wait = backoff;
    if (resp) {
      if (auto after = RetryAfter(*resp)) wait = std::min<std::chrono::milliseconds>(*after, retry_.max_retry_after);
    }
    clock_->SleepFor(wait);
    backoff = std::min(backoff * 2, retry_.max_backoff);
  }
}

Result<HttpResponse> KubeClient::Call(const std::string& method, const std::string& path, const std::string& body,
                                      long timeout_ms, bool* maybe_applied) const {
  if (method == "GET" || method == "DELETE") return WithRetries(method, path, body, timeout_ms, maybe_applied);
  internal::HttpRequest r{method, c_.server + path, body, "application/json", timeout_ms, {}};
  return http_->Call(
      c_.transport, r,
      fmt::format("kubernetes API server {} (context `{}` of {}) cannot be reached", c_.server, c_.context, c_.source));
}

Result<HttpResponse> KubeClient::Create(const std::string& path, const std::string& body, bool* maybe_created) const {
  return WithRetries("POST", path, body, 30000, maybe_created);
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
    case 404:
      return NotFoundError(text);
    case 409:
      return AlreadyExistsError(text);
    case 401:  // the kubeconfig's credentials were refused: an expired token, most often
      return Status(StatusCode::kPermissionDenied,
                    text +
                        " (the API server refused the kubeconfig's credentials: an expired token? refresh them, "
                        "e.g. with your cloud's `get-credentials`)");
    case 403:
      return Status(StatusCode::kPermissionDenied, text);
    case 400:
    case 422:
      return InvalidArgumentError(text);
    default:
      return UnavailableError(text);
  }
}

}  // namespace torchx::schedulers::kubernetes
