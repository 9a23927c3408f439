#include "http/http.h"

#include <cctype>

#include <fmt/format.h>

#include "http/curl_api.h"

namespace torchx::internal {
namespace {

struct Sink {
  const CurlApi* api = nullptr;
  const std::function<bool(std::string_view)>* fn = nullptr;  // null: collect into body
  std::string* body = nullptr;
  long status = 0;
  CURL* curl = nullptr;
  bool stopped = false;
};

size_t Write(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  std::string_view chunk(data, size * n);
  if (sink->fn) {
    if (sink->status == 0) sink->api->easy_getinfo(sink->curl, CURLINFO_RESPONSE_CODE, &sink->status);
    // An error's body is a message for the user, not stream data.
    if (sink->status >= 300) {
      sink->body->append(chunk);
      return chunk.size();
    }
    if (!(*sink->fn)(chunk)) {
      sink->stopped = true;
      return 0;  // aborts the transfer
    }
    return chunk.size();
  }
  sink->body->append(chunk);
  return chunk.size();
}

curl_blob Blob(const std::string& pem) { return curl_blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY}; }

Result<HttpResponse> Perform(const HttpTransport& t, const HttpRequest& r, std::string_view what,
                             const std::function<bool(std::string_view)>* on_data) {
  TORCHX_ASSIGN_OR_RETURN(const CurlApi* api, Curl());
  CURL* curl = api->easy_init();
  if (!curl) return InternalError("http: curl_easy_init failed");
  HttpResponse resp;
  Sink sink{api, on_data, &resp.body, 0, curl};
  curl_slist* headers = api->slist_append(nullptr, ("Content-Type: " + r.content_type).c_str());
  for (const std::string& h : t.headers) headers = api->slist_append(headers, h.c_str());
  for (const std::string& h : r.headers) headers = api->slist_append(headers, h.c_str());
  if (!t.unix_socket.empty()) api->easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, t.unix_socket.c_str());
  if (!t.ca_file.empty()) api->easy_setopt(curl, CURLOPT_CAINFO, t.ca_file.c_str());
  curl_blob ca = Blob(t.ca_pem), cert = Blob(t.client_cert_pem), key = Blob(t.client_key_pem);
  if (!t.ca_pem.empty()) api->easy_setopt(curl, CURLOPT_CAINFO_BLOB, &ca);
  if (!t.client_cert_file.empty()) api->easy_setopt(curl, CURLOPT_SSLCERT, t.client_cert_file.c_str());
  if (!t.client_cert_pem.empty()) api->easy_setopt(curl, CURLOPT_SSLCERT_BLOB, &cert);
  if (!t.client_key_file.empty()) api->easy_setopt(curl, CURLOPT_SSLKEY, t.client_key_file.c_str());
  if (!t.client_key_pem.empty()) api->easy_setopt(curl, CURLOPT_SSLKEY_BLOB, &key);
  if (t.insecure_skip_verify) {
    api->easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    api->easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!t.user_password.empty()) {
    api->easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    api->easy_setopt(curl, CURLOPT_USERPWD, t.user_password.c_str());
  }
  api->easy_setopt(curl, CURLOPT_URL, r.url.c_str());
  api->easy_setopt(curl, CURLOPT_CUSTOMREQUEST, r.method.c_str());
  api->easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  api->easy_setopt(curl, CURLOPT_TIMEOUT_MS, r.timeout_ms);
  api->easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  api->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  api->easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Write);
  api->easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  if (!r.body.empty() || r.method == "POST" || r.method == "PUT" || r.method == "PATCH") {
    api->easy_setopt(curl, CURLOPT_POSTFIELDS, r.body.c_str());
    api->easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(r.body.size()));
  }
  CURLcode rc = api->easy_perform(curl);
  api->easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &resp.status);
  api->slist_free_all(headers);
  api->easy_cleanup(curl);
  if (rc != CURLE_OK && !sink.stopped) {
    switch (rc) {
      case CURLE_COULDNT_RESOLVE_PROXY:
      case CURLE_COULDNT_RESOLVE_HOST:
      case CURLE_COULDNT_CONNECT:
      case CURLE_SSL_CONNECT_ERROR:
      case CURLE_PEER_FAILED_VERIFICATION:
        return NotSentError(what, api->easy_strerror(rc));
      default:
        return UnavailableError(fmt::format("{}: {}", what, api->easy_strerror(rc)));
    }
  }
  return resp;
}

class CurlHttpClient final : public HttpClient {
 public:
  Result<HttpResponse> Call(const HttpTransport& transport, const HttpRequest& request,
                            std::string_view what) override {
    return Perform(transport, request, what, nullptr);
  }
  Result<HttpResponse> Stream(const HttpTransport& transport, const HttpRequest& request, std::string_view what,
                              const std::function<bool(std::string_view)>& on_data) override {
    return Perform(transport, request, what, &on_data);
  }
};

}  // namespace

std::shared_ptr<HttpClient> MakeCurlHttpClient() { return std::make_shared<CurlHttpClient>(); }

std::string UrlEncode(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

namespace {
constexpr std::string_view kNotSent = " (the request was not sent)";
}  // namespace

Status NotSentError(std::string_view what, std::string_view detail) {
  return UnavailableError(fmt::format("{}: {}{}", what, detail, kNotSent));
}

bool WasNotSent(const Status& status) {
  return status.code() == StatusCode::kUnavailable && status.message().ends_with(kNotSent);
}

}  // namespace torchx::internal
