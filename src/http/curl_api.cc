#include "http/curl_api.h"

#include <dlfcn.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "core/helper_exe.h"

namespace torchx::internal {
namespace {

constexpr const char* kLibrary = "libcurl.so.4";
// A wheel carries its own libcurl (and what that needs) for machines without one: this small
// object in the package directory links it, so auditwheel copies it into the wheel and points
// the object at the copy. Opening it brings that libcurl, and dlsym on its handle searches it.
constexpr const char* kCarrier = "_libcurl.so";

// The carried copy when this install has one, else the system's.
void* OpenLibcurl(std::string& why) {
  for (const std::filesystem::path& dir : PackageDirs()) {
    std::filesystem::path carrier = dir / kCarrier;
    std::error_code ec;
    if (!std::filesystem::exists(carrier, ec)) continue;
    if (void* lib = dlopen(carrier.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
    const char* error = dlerror();
    why = fmt::format("{}: {}; ", carrier.string(), error ? error : "cannot be loaded");
  }
  if (void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL)) return lib;
  const char* error = dlerror();
  why += error ? error : "not found";
  return nullptr;
}

template <typename Fn>
bool Bind(void* lib, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn) missing = name;
  return fn != nullptr;
}

Result<const CurlApi*> Load() {
  // Never closed: transfers may be running on other threads until the process exits.
  std::string why;
  void* lib = OpenLibcurl(why);
  if (!lib) {
    return FailedPreconditionError(fmt::format(
        "http: cannot load {} ({}): the local_docker and kubernetes schedulers need libcurl (Debian/Ubuntu: apt "
        "install libcurl4)",
        kLibrary, why));
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
