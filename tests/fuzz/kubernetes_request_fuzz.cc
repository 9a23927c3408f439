// Property: the kubernetes request decoder (what Schedule reads from an edited payload) never
// throws or crashes; what it accepts re-encodes to a payload that decodes to the same request,
// and every image it accepts to push splits into repo and tag.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "schedulers/kubernetes/kubernetes_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchx::schedulers::kubernetes;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto req = KubernetesRequestFromJson(in);
  if (!req) return 0;
  if (req->ns.empty() || req->job_name.empty()) std::abort();
  for (const std::string& ref : req->push) {
    size_t colon = ref.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == ref.size()) std::abort();
  }
  std::string once = KubernetesRequestToJson(*req);
  auto again = KubernetesRequestFromJson(once);
  if (!again || KubernetesRequestToJson(*again) != once) std::abort();
  return 0;
}
