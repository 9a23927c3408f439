// One HTTP(S) call, behind the HttpClient seam (libcurl in the real one), for the back-ends that
// speak an engine's REST API: the container engine over its unix socket, the Kubernetes API
// server over TLS with the kubeconfig's CA, client certificate and token.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "torchx/status.h"

namespace torchx::internal {

/// How to reach the server. PEM fields hold certificate/key text; *_file fields name files.
struct HttpTransport {
  std::string unix_socket;  ///< non-empty: connect through this socket
  std::string ca_file, ca_pem;
  std::string client_cert_file, client_cert_pem;
  std::string client_key_file, client_key_pem;
  bool insecure_skip_verify = false;
  std::vector<std::string> headers;  ///< e.g. "Authorization: Bearer ..."
  std::string user_password;         ///< "user:password" for basic auth
};

struct HttpResponse {
  long status = 0;
  std::string body;
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::string body;
  std::string content_type = "application/json";
  long timeout_ms = 60000;           ///< 0: no limit (followed streams)
  std::vector<std::string> headers;  ///< added to the transport's, e.g. "X-Registry-Auth: ..."
};

/// One HTTP call or stream: the seam the REST back-ends (container engine, Kubernetes) talk
/// through, so that their unit tests answer in the server's place (src/testing/fake_http_client.h).
/// The real one is MakeCurlHttpClient(). Implementations must allow calls from several threads at
/// once: a followed log streams on its own thread while the scheduler keeps calling.
class HttpClient {
 public:
  virtual ~HttpClient() = default;

  /// kUnavailable (with the transport's reason and `what`, naming the server for the user) when
  /// the server cannot be reached; an HTTP error status is not an error here.
  virtual Result<HttpResponse> Call(const HttpTransport& transport, const HttpRequest& request,
                                    std::string_view what) = 0;

  /// Like Call, but hands the body to `on_data` as it arrives (return false to stop; that is not
  /// an error). The response's body stays empty unless the status is an error (then it is kept).
  virtual Result<HttpResponse> Stream(const HttpTransport& transport, const HttpRequest& request, std::string_view what,
                                      const std::function<bool(std::string_view)>& on_data) = 0;
};

/// The real client: each call is one libcurl easy transfer (no state shared between calls).
std::shared_ptr<HttpClient> MakeCurlHttpClient();

/// The error of a call that never reached the server (its name did not resolve, nothing
/// listened, the TLS handshake failed): kUnavailable, `what: detail`, marked so that
/// WasNotSent() tells it from a call that failed after it may have been taken (a timeout, a
/// dropped connection), which a retry might do twice. HttpClient implementations report it so.
Status NotSentError(std::string_view what, std::string_view detail);
bool WasNotSent(const Status& status);

/// Percent-encodes a query parameter value.
std::string UrlEncode(std::string_view s);

}  // namespace torchx::internal
