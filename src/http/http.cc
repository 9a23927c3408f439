#include "http/http.h"

#include <curl/curl.h>

#include <cctype>
#include <mutex>

#include <fmt/format.h>

namespace torchx::internal {
namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Sink {
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
    if (sink->status == 0) curl_easy_getinfo(sink->curl, CURLINFO_RESPONSE_CODE, &sink->status);
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

curl_blob Blob(const std::string& pem) {
  return curl_blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
}

Result<HttpResponse> Perform(const HttpTransport& t, const HttpRequest& r, std::string_view what,
                             const std::function<bool(std::string_view)>* on_data) {
  GlobalInit();
  CURL* curl = curl_easy_init();
  if (!curl) return InternalError("http: curl_easy_init failed");
  HttpResponse resp;
  Sink sink{on_data, &resp.body, 0, curl};
  curl_slist* headers = curl_slist_append(nullptr, ("Content-Type: " + r.content_type).c_str());
  for (const std::string& h : t.headers) headers = curl_slist_append(headers, h.c_str());
  for (const std::string& h : r.headers) headers = curl_slist_append(headers, h.c_str());
  if (!t.unix_socket.empty()) curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, t.unix_socket.c_str());
  if (!t.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, t.ca_file.c_str());
  curl_blob ca = Blob(t.ca_pem), cert = Blob(t.client_cert_pem), key = Blob(t.client_key_pem);
  if (!t.ca_pem.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &ca);
  if (!t.client_cert_file.empty()) curl_easy_setopt(curl, CURLOPT_SSLCERT, t.client_cert_file.c_str());
  if (!t.client_cert_pem.empty()) curl_easy_setopt(curl, CURLOPT_SSLCERT_BLOB, &cert);
  if (!t.client_key_file.empty()) curl_easy_setopt(curl, CURLOPT_SSLKEY, t.client_key_file.c_str());
  if (!t.client_key_pem.empty()) curl_easy_setopt(curl, CURLOPT_SSLKEY_BLOB, &key);
  if (t.insecure_skip_verify) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!t.user_password.empty()) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(curl, CURLOPT_USERPWD, t.user_password.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_URL, r.url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, r.method.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, r.timeout_ms);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Write);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  if (!r.body.empty() || r.method == "POST" || r.method == "PUT" || r.method == "PATCH") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, r.body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(r.body.size()));
  }
  CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &resp.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK && !sink.stopped) {
    return UnavailableError(fmt::format("{}: {}", what, curl_easy_strerror(rc)));
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

}  // namespace torchx::internal
