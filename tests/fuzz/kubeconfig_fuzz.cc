// kubeconfig text (exec plugins off): never crashes; a connection it yields has a server without
// a trailing '/', and its only headers are bearer tokens.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "schedulers/kubernetes/kube_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  // Token and certificate paths are read: keep the fuzzer off device and proc files (a read of
  // /dev/zero never ends).
  if (text.find("/dev") != std::string::npos || text.find("/proc") != std::string::npos ||
      text.find("/sys") != std::string::npos) {
    return 0;
  }
  auto c = torchx::schedulers::kubernetes::KubeConfigFromYaml(text, "/nonexistent-fuzz-dir", {});
  if (!c) return 0;
  if (c->server.empty() || c->server.back() == '/') std::abort();
  for (const std::string& h : c->transport.headers) {
    if (h.rfind("Authorization: Bearer ", 0) != 0) std::abort();
  }
  return 0;
}
