// libcurl, opened on first use (dlopen of its stable soname, libcurl.so.4) instead of linked:
// the CLI and the Python extension then start without libcurl and the ~30 libraries it pulls in
// (TLS, Kerberos, LDAP, ...: about 8 ms of every call), and only a call that really talks HTTP
// pays for them, a kubernetes dry run included. The pointers are typed from <curl/curl.h>, so a
// signature mismatch fails to compile.
#pragma once

#include <curl/curl.h>

#include "torchx/status.h"

namespace torchx::internal {

struct CurlApi {
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_perform) easy_perform;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
};

/// libcurl, loaded and globally initialised once per process (thread-safe). kFailedPrecondition
/// naming the library and the package to install when it cannot be loaded.
Result<const CurlApi*> Curl();

}  // namespace torchx::internal
