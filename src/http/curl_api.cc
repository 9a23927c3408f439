#include "http/curl_api.h"

#include <dlfcn.h>

#include <string>

#include <fmt/format.h>

namespace torchx::internal {
namespace {

constexpr const char* kLibrary = "libcurl.so.4";

template <typename Fn>
bool Bind(void* lib, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn) missing = name;
  return fn != nullptr;
}

Result<const CurlApi*> Load() {
  // Never closed: transfers may be running on other threads until the process exits.
  void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    return FailedPreconditionError(fmt::format(
        "http: cannot load {} ({}): the local_docker and kubernetes schedulers need libcurl (Debian/Ubuntu: apt "
        "install libcurl4)",
        kLibrary, why ? why : "not found"));
  }
  static CurlApi api;
  std::string missing;
  decltype(&::curl_global_init) global_init = nullptr;
  bool ok = Bind(lib, "curl_global_init", global_init, missing) &&
            Bind(lib, "curl_easy_init", api.easy_init, missing) &&
            Bind(lib, "curl_easy_setopt", api.easy_setopt, missing) &&
            Bind(lib, "curl_easy_getinfo", api.easy_getinfo, missing) &&
            Bind(lib, "curl_easy_perform", api.easy_perform, missing) &&
            Bind(lib, "curl_easy_cleanup", api.easy_cleanup, missing) &&
            Bind(lib, "curl_easy_strerror", api.easy_strerror, missing) &&
            Bind(lib, "curl_slist_append", api.slist_append, missing) &&
            Bind(lib, "curl_slist_free_all", api.slist_free_all, missing);
  if (!ok) return FailedPreconditionError(fmt::format("http: {} has no `{}`: libcurl is too old", kLibrary, missing));
  if (CURLcode rc = global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK) {
    return FailedPreconditionError(fmt::format("http: curl_global_init failed ({})", api.easy_strerror(rc)));
  }
  return &api;
}

}  // namespace

Result<const CurlApi*> Curl() {
  static const Result<const CurlApi*> loaded = Load();
  return loaded;
}

}  // namespace torchx::internal
