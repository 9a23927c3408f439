// The `tolerations` runopt's items: never crashes; a parsed toleration has a key, an Equal
// operator exactly when it came with a value separator, and one of Kubernetes' effects or none.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "schedulers/kubernetes/volcano_job.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string spec(reinterpret_cast<const char*>(data), size);
  auto t = torchx::schedulers::kubernetes::ParseToleration(spec);
  if (!t) return 0;
  if (t->key.empty()) std::abort();
  if (t->op != "Equal" && t->op != "Exists") std::abort();
  if (t->op == "Exists" && !t->value.empty()) std::abort();
  if (!t->effect.empty() && t->effect != "NoSchedule" && t->effect != "PreferNoSchedule" && t->effect != "NoExecute") {
    std::abort();
  }
  return 0;
}
