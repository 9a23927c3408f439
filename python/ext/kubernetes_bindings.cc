// torchx.schedulers.kubernetes_scheduler's module functions (TorchX's role_to_pod, app_to_resource,
// pod_labels): the core's Volcano Job manifest builder, which the kubernetes back-end submits.
#include <pybind11/stl.h>

#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "bindings.h"
#include "errors.h"
#include "schedulers/kubernetes/volcano_job.h"
#include "torchx/specs/serialize.h"

namespace torchx::python {
namespace py = pybind11;
namespace k8s = schedulers::kubernetes;

namespace {

// A count TorchX's functions take (reserved_millicpu, ...): an int from 0 up, else ValueError naming it.
int CountArg(const nlohmann::json& j, const char* key, int fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  const nlohmann::json& v = j[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > std::numeric_limits<int>::max()) {
    throw py::value_error(std::string(key) + " must be an int from 0 to " +
                          std::to_string(std::numeric_limits<int>::max()) + ", got " + v.dump());
  }
  return v.get<int>();
}

// What Python passes: the manifest's options, TorchX's argument names.
k8s::VolcanoJobOptions OptionsFromJson(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text);
  auto str = [&](const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  k8s::VolcanoJobOptions o;
  o.job_name = str("job_name");
  o.namespace_ = str("namespace");
  o.queue = str("queue");
  o.service_account = str("service_account");
  o.priority_class = str("priority_class");
  o.torchx_version = TORCHX_VERSION;
  o.reserved_millicpu = CountArg(j, "reserved_millicpu", o.reserved_millicpu);
  o.reserved_memmb = CountArg(j, "reserved_memmb", o.reserved_memmb);
  if (j.contains("efa_device_count") && !j["efa_device_count"].is_null()) {
    o.efa_device_count = CountArg(j, "efa_device_count", 0);
  }
  return o;
}

specs::AppDef AppFromJson(const std::string& app_json) {
  return ValueOrThrow(specs::AppDefFromJson(app_json));
}

}  // namespace

void BindKubernetes(py::module_& m) {
  m.def("kubernetes_job_app_part", &k8s::JobNameAppPart);
  m.def("kubernetes_role_to_pod", [](const std::string& name, const std::string& app_json, const std::string& options) {
    // The role travels as the only role of an app (the canonical JSON has no role-only form).
    specs::AppDef app = AppFromJson(app_json);
    return k8s::RoleToPod(name, app.roles.at(0), OptionsFromJson(options)).dump();
  });
  m.def("kubernetes_app_to_resource", [](const std::string& app_json, const std::string& options) {
    return ValueOrThrow(k8s::AppToVolcanoJob(AppFromJson(app_json), OptionsFromJson(options)))
        .dump();
  });
  m.def("kubernetes_pod_labels", [](const std::string& app_json, int role_idx, int replica_id, const std::string& job) {
    specs::AppDef app = AppFromJson(app_json);
    if (role_idx < 0 || static_cast<size_t>(role_idx) >= app.roles.size()) {
      throw py::index_error("role_idx " + std::to_string(role_idx) + " is not a role of the app");
    }
    return k8s::PodLabels(app, role_idx, replica_id, job, TORCHX_VERSION);
  });
}

}  // namespace torchx::python
