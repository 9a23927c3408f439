// Property: the local_docker request decoder (what Schedule reads from an edited payload) never
// throws or crashes, and what it accepts re-encodes to a payload that decodes to the same
// request (encode is a fixed point after one decode).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "schedulers/docker/docker_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchx::schedulers::docker;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto req = DockerRequestFromJson(in);
  if (!req) return 0;
  std::string once = DockerRequestToJson(*req);
  auto again = DockerRequestFromJson(once);
  if (!again || DockerRequestToJson(*again) != once) std::abort();
  return 0;
}
