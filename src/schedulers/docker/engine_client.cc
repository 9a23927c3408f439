#include "schedulers/docker/engine_client.h"

#include <curl/curl.h>

#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

namespace torchx::schedulers::docker {
namespace {

constexpr const char* kApiPrefix = "/v1.41";

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t Collect(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

struct StreamCtx {
  const std::function<bool(std::string_view)>* fn;
  bool stopped = false;
};

size_t Forward(char* data, size_t size, size_t n, void* user) {
  auto* ctx = static_cast<StreamCtx*>(user);
  if (!(*ctx->fn)(std::string_view(data, size * n))) {
    ctx->stopped = true;
    return 0;  // aborts the transfer
  }
  return size * n;
}

}  // namespace

EngineClient::EngineClient(std::string socket_path) : socket_(std::move(socket_path)) {
  if (socket_.empty()) {
    const char* host = std::getenv("DOCKER_HOST");
    std::string h = host ? host : "";
    socket_ = h.rfind("unix://", 0) == 0 ? h.substr(7) : "/var/run/docker.sock";
  }
}

Result<HttpResponse> EngineClient::Request(const std::string& method, const std::string& path,
                                           const std::string& body, long timeout_ms,
                                           const std::string& content_type) const {
  GlobalInit();
  CURL* curl = curl_easy_init();
  if (!curl) return InternalError("engine client: curl_easy_init failed");
  HttpResponse resp;
  std::string url = std::string("http://localhost") + kApiPrefix + path;
  curl_slist* headers = curl_slist_append(nullptr, ("Content-Type: " + content_type).c_str());
  curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, socket_.c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &resp.body);
  if (method == "POST" || method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &resp.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) {
    return UnavailableError(fmt::format("container engine at unix://{} cannot be reached: {} (is dockerd or "
                                        "`podman system service` running? set DOCKER_HOST=unix://<socket>)",
                                        socket_, curl_easy_strerror(rc)));
  }
  return resp;
}

Result<long> EngineClient::Stream(const std::string& path, const std::function<bool(std::string_view)>& on_data) const {
  GlobalInit();
  CURL* curl = curl_easy_init();
  if (!curl) return InternalError("engine client: curl_easy_init failed");
  std::string url = std::string("http://localhost") + kApiPrefix + path;
  StreamCtx ctx{&on_data};
  curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, socket_.c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Forward);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &ctx);
  CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK && !ctx.stopped) {
    return UnavailableError(fmt::format("container engine at unix://{}: {}", socket_, curl_easy_strerror(rc)));
  }
  return status;
}

std::string UrlEncode(const std::string& s) {
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

}  // namespace torchx::schedulers::docker
