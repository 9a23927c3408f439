// An HttpClient for back-end unit tests: requests are answered by handlers chosen by method and
// URL path prefix, and recorded, so a scheduler that speaks an
// engine's REST API (local_docker, kubernetes) is tested without the engine. An unanswered request
// gets a 404 naming it; SetUnreachable() makes every call fail as libcurl does when nothing
// listens (kUnavailable with the caller's `what`).
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "http/http.h"
#include "torchx/status.h"

namespace torchx::testing {

class FakeHttpClient : public internal::HttpClient {
 public:
  struct Request {
    std::string method;
    std::string path;  ///< the URL without scheme and host, query included
    std::string body;
    std::vector<std::string> headers;
    std::string unix_socket;  ///< the transport's, to check where a call went
  };
  using Handler = std::function<Result<internal::HttpResponse>(const Request&)>;

  /// Requests with `method` whose path starts with `path_prefix` are answered by `handler`. The
  /// longest matching prefix wins, and of equal ones the latest, so a test can change an answer.
  void On(std::string method, std::string path_prefix, Handler handler) {
    std::lock_guard lock(mu_);
    routes_.push_back({std::move(method), std::move(path_prefix), std::move(handler)});
  }
  /// The same, always answering `status` with `body`.
  void On(std::string method, std::string path_prefix, long status, std::string body) {
    On(std::move(method), std::move(path_prefix),
       [status, body = std::move(body)](const Request&) -> Result<internal::HttpResponse> {
         return internal::HttpResponse{status, body};
       });
  }
  /// From now on nothing answers: every call is kUnavailable, as when the server is down.
  void SetUnreachable() {
    std::lock_guard lock(mu_);
    unreachable_ = true;
  }

  Result<internal::HttpResponse> Call(const internal::HttpTransport& transport, const internal::HttpRequest& request,
                                      std::string_view what) override {
    return Answer(transport, request, what);
  }

  // The whole body in one piece: what matters to the callers is the data, not its chunking.
  Result<internal::HttpResponse> Stream(const internal::HttpTransport& transport, const internal::HttpRequest& request,
                                        std::string_view what,
                                        const std::function<bool(std::string_view)>& on_data) override {
    auto resp = Answer(transport, request, what);
    if (!resp.ok() || resp->status >= 300) return resp;
    if (!resp->body.empty()) on_data(resp->body);
    resp->body.clear();
    return resp;
  }

  /// Every request so far, in order.
  std::vector<Request> requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }
  /// The requests so far with `method` whose path starts with `path_prefix`.
  std::vector<Request> RequestsTo(const std::string& method, const std::string& path_prefix) const {
    std::vector<Request> out;
    for (auto& r : requests()) {
      if (r.method == method && r.path.rfind(path_prefix, 0) == 0) out.push_back(r);
    }
    return out;
  }

 private:
  struct Route {
    std::string method, prefix;
    Handler handler;
  };

  static std::string PathOf(const std::string& url) {
    size_t scheme = url.find("://");
    size_t slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    return slash == std::string::npos ? "/" : url.substr(slash);
  }

  Result<internal::HttpResponse> Answer(const internal::HttpTransport& transport, const internal::HttpRequest& request,
                                        std::string_view what) {
    Request r{request.method, PathOf(request.url), request.body, request.headers, transport.unix_socket};
    Handler handler;
    {
      std::lock_guard lock(mu_);
      requests_.push_back(r);
      if (unreachable_) return internal::NotSentError(what, "Couldn't connect to server");
      size_t best_len = 0;
      for (const Route& route : routes_) {
        if (route.method == r.method && r.path.rfind(route.prefix, 0) == 0 &&
            (!handler || route.prefix.size() >= best_len)) {
          handler = route.handler;
          best_len = route.prefix.size();
        }
      }
    }
    // Outside the lock: a handler may look at the recorded requests.
    if (!handler) {
      return internal::HttpResponse{404,
                                    fmt::format(R"({{"message":"fake: nothing answers {} {}"}})", r.method, r.path)};
    }
    return handler(r);
  }

  mutable std::mutex mu_;
  std::vector<Route> routes_;
  std::vector<Request> requests_;
  bool unreachable_ = false;
};

}  // namespace torchx::testing
