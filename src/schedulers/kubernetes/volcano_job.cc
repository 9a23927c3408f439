#include "schedulers/kubernetes/volcano_job.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "core/value_json.h"
#include "torchx/specs/app_id.h"
#include "torchx/specs/app_state.h"
#include "torchx/specs/macros.h"
#include "torchx/specs/overlays.h"

namespace torchx::schedulers::kubernetes {
namespace {

using Json = nlohmann::json;
using specs::AppState;

constexpr const char* kInstanceType = "node.kubernetes.io/instance-type";
// role.env values with this prefix are read from the pod's own fields at run time.
constexpr std::string_view kFieldPath = "[FIELD_PATH]";
constexpr const char* kEfaDevice = "vpc.amazonaws.com/efa";
// Of a job name: the app name's part, leaving room for the random suffix and task names.
constexpr size_t kMaxAppPart = 20;

// Label values: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends (app names may hold
// anything; TorchX passes them through and the API server refuses the job).
std::string LabelValue(const std::string& s) {
  std::string out;
  for (char c : s) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    out += ok ? c : '.';  // TorchX's replacement character
  }
  if (out.size() > 63) out.resize(63);
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  while (!out.empty() && !alnum(out.back())) out.pop_back();
  size_t start = 0;
  while (start < out.size() && !alnum(out[start])) ++start;
  return out.substr(start);
}

// The role's pod overlay: metadata["kubernetes"] holds overlays by kind (torchx.specs.overlays'
// set_overlay), a legacy flat overlay, or the path of a file holding either.
Result<nlohmann::ordered_json> PodOverlay(const specs::Role& role) {
  auto it = role.metadata.find("kubernetes");
  if (it == role.metadata.end()) return nlohmann::ordered_json::object();
  nlohmann::ordered_json ns;
  if (it->second.is_string()) {
    TORCHX_ASSIGN_OR_RETURN(ns, specs::overlays::LoadFile(it->second.as_string()));
  } else {
    ns = internal::ValueToJson<nlohmann::ordered_json>(it->second);
  }
  return specs::overlays::Get(ns, "V1Pod");
}

Json Resources(const specs::Resource& r, const VolcanoJobOptions& o) {
  Json limits = Json::object(), requests = Json::object();
  if (r.cpu > 0) {
    long long mcpu = r.cpu * 1000LL;  // an int cpu count times 1000 may not fit an int
    limits["cpu"] = fmt::format("{}m", mcpu);
    requests["cpu"] = fmt::format("{}m", std::max<long long>(mcpu - o.reserved_millicpu, 0));
  }
  if (r.memMB > 0) {
    limits["memory"] = fmt::format("{}M", r.memMB);
    requests["memory"] = fmt::format("{}M", std::max(r.memMB - o.reserved_memmb, 0));
  }
  if (r.gpu > 0) limits["nvidia.com/gpu"] = requests["nvidia.com/gpu"] = std::to_string(r.gpu);
  for (const auto& [name, count] : r.devices) limits[name] = std::to_string(count);
  if (o.efa_device_count) {
    if (*o.efa_device_count == 0) {
      limits.erase(kEfaDevice);
    } else {
      limits[kEfaDevice] = std::to_string(*o.efa_device_count);
    }
  }
  return {{"limits", limits}, {"requests", requests}};
}

Json Env(const std::map<std::string, std::string>& env) {
  Json out = Json::array();
  for (const auto& [name, value] : env) {
    if (value.starts_with(kFieldPath)) {
      out.push_back({{"name", name}, {"valueFrom", {{"fieldRef", {{"fieldPath", value.substr(kFieldPath.size())}}}}}});
    } else {
      out.push_back({{"name", name}, {"value", value}});
    }
  }
  return out;
}

// Volumes and the container's mounts: /dev/shm as an unbounded tmpfs (PyTorch data loaders
// outgrow the 64M default), then the role's mounts. A device mount needs a privileged container:
// Kubernetes has no `--device`.
void AddVolumes(const specs::Role& role, Json& volumes, Json& mounts, Json& security) {
  volumes.push_back({{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}}}});
  mounts.push_back({{"name", "dshm"}, {"mountPath", "/dev/shm"}});
  for (size_t i = 0; i < role.mounts.size(); ++i) {
    std::string name = fmt::format("mount-{}", i);
    const specs::Mount& m = role.mounts[i];
    if (const auto* b = std::get_if<specs::BindMount>(&m)) {
      volumes.push_back({{"name", name}, {"hostPath", {{"path", b->src_path}}}});
      mounts.push_back({{"name", name}, {"mountPath", b->dst_path}, {"readOnly", b->read_only}});
    } else if (const auto* v = std::get_if<specs::VolumeMount>(&m)) {
      volumes.push_back({{"name", name}, {"persistentVolumeClaim", {{"claimName", v->src}}}});
      mounts.push_back({{"name", name}, {"mountPath", v->dst_path}, {"readOnly", v->read_only}});
    } else if (const auto* d = std::get_if<specs::DeviceMount>(&m)) {
      volumes.push_back({{"name", name}, {"hostPath", {{"path", d->src_path}}}});
      bool writable = d->permissions.find_first_of("wm") != std::string::npos;
      mounts.push_back({{"name", name}, {"mountPath", d->dst_path}, {"readOnly", !writable}});
      security["privileged"] = true;
    }
  }
}

Result<Json> RetryPolicies(const specs::AppDef& app, const specs::Role& role) {
  Json restart_job = Json::array(
      {{{"event", "PodEvicted"}, {"action", "RestartJob"}}, {{"event", "PodFailed"}, {"action", "RestartJob"}}});
  switch (role.retry_policy) {
    case specs::RetryPolicy::kApplication:
      return restart_job;
    case specs::RetryPolicy::kReplica:
      // Each replica is its own task: restarting the task restarts that replica only.
      return Json::array(
          {{{"event", "PodEvicted"}, {"action", "RestartTask"}}, {{"event", "PodFailed"}, {"action", "RestartTask"}}});
    case specs::RetryPolicy::kRole:
      // With one role, the role is the whole job. Volcano has no action that restarts a group of
      // tasks, so with several roles ROLE cannot be honoured.
      if (app.roles.size() == 1) return restart_job;
      return InvalidArgumentError(
          fmt::format("kubernetes: role `{}` has retry_policy ROLE, which Volcano cannot express when an app has "
                      "several roles (it restarts a task or the whole job); valid choices here: APPLICATION, REPLICA",
                      role.name));
  }
  return restart_job;
}

}  // namespace

Result<Toleration> ParseToleration(const std::string& spec) {
  constexpr const char* kFormat = "key[:value][:effect] (or key=value[:effect] outside -cfg)";
  Toleration t;
  std::vector<std::string> parts = internal::SplitAny(spec, ":");
  auto is_effect = [](const std::string& e) {
    return e == "NoSchedule" || e == "PreferNoSchedule" || e == "NoExecute";
  };
  if (parts.size() > 1 && is_effect(parts.back())) {
    t.effect = parts.back();
    parts.pop_back();
  } else if (parts.size() == 3) {
    return InvalidArgumentError(fmt::format(
        "kubernetes: tolerations: `{}` has effect `{}`; valid effects: NoSchedule, PreferNoSchedule, NoExecute ({})",
        spec, parts.back(), kFormat));
  }
  if (parts.size() > 2)
    return InvalidArgumentError(fmt::format("kubernetes: tolerations: `{}` is not {}", spec, kFormat));
  t.key = parts[0];
  if (parts.size() == 2) {
    t.value = parts[1];
    t.op = "Equal";
  } else if (auto eq = t.key.find('='); eq != std::string::npos) {
    t.value = t.key.substr(eq + 1);
    t.key.resize(eq);
    t.op = "Equal";
  }
  if (t.key.empty()) {
    return InvalidArgumentError(fmt::format("kubernetes: tolerations: `{}` has no key ({})", spec, kFormat));
  }
  return t;
}

std::string NormalizeStr(const std::string& s) {
  std::string_view in = s;
  if (in.starts_with('-')) in.remove_prefix(1);
  std::string out;
  for (char c : in) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '-') out += l;
  }
  return out;
}

std::string JobNameAppPart(const std::string& app_name) {
  std::string app = NormalizeStr(app_name);
  // A leading digit or '-' is fine for Volcano but not for every label; keep it a DNS label.
  while (!app.empty() && !std::isalpha(static_cast<unsigned char>(app[0]))) app.erase(0, 1);
  if (app.empty()) app = "app";
  if (app.size() > kMaxAppPart) app.resize(kMaxAppPart);
  while (app.ends_with('-')) app.pop_back();
  return app;
}

std::string MakeJobName(const std::string& app_name) {
  return NormalizeStr(specs::MakeUnique(JobNameAppPart(app_name)));
}

std::string TaskName(const std::string& job, const std::string& role, int replica) {
  std::string suffix = fmt::format("-{}", replica);
  std::string r = NormalizeStr(role);
  // Volcano makes `<job>-<task>-0` the pod's hostname: an RFC 1123 label of at most 63.
  size_t room = 63 - std::min<size_t>(63, job.size() + 3 + suffix.size());
  if (r.size() > room) r.resize(room);
  while (r.ends_with('-')) r.pop_back();
  return r + suffix;
}

std::string PodName(const std::string& job, const std::string& role, int replica) {
  return fmt::format("{}-{}-0", job, TaskName(job, role, replica));
}

Json RoleToPod(const std::string& name, const specs::Role& r, const VolcanoJobOptions& o) {
  Json volumes = Json::array(), mounts = Json::array(), security = Json::object();
  AddVolumes(r, volumes, mounts, security);
  Json command = Json::array({r.entrypoint});
  for (const auto& a : r.args) command.push_back(a);
  Json ports = Json::array();
  for (const auto& [port_name, port] : r.port_map) ports.push_back({{"name", port_name}, {"containerPort", port}});
  Json container = {{"command", command},
                    {"env", Env(r.env)},
                    {"image", r.image},
                    {"name", name},
                    {"ports", ports},
                    {"resources", Resources(r.resource, o)},
                    {"securityContext", security},
                    {"volumeMounts", mounts}};

  Json node_selector = Json::object();
  if (auto it = r.resource.capabilities.find(kInstanceType);
      it != r.resource.capabilities.end() && it->second.is_string()) {
    node_selector[kInstanceType] = it->second.as_string();
  }
  for (const auto& [k, v] : o.node_selector) node_selector[k] = v;
  Json spec = {{"containers", Json::array({container})},
               {"nodeSelector", node_selector},
               {"restartPolicy", "Never"},
               {"volumes", volumes}};
  if (!o.service_account.empty()) spec["serviceAccountName"] = o.service_account;
  if (!o.tolerations.empty()) {
    Json tolerations = Json::array();
    for (const Toleration& t : o.tolerations) {
      Json j = {{"key", t.key}, {"operator", t.op}};
      if (t.op == "Equal") j["value"] = t.value;
      if (!t.effect.empty()) j["effect"] = t.effect;
      tolerations.push_back(j);
    }
    spec["tolerations"] = tolerations;
  }
  // Istio's sidecar would keep the pod alive after the trainer exits.
  Json metadata = {{"annotations", {{"sidecar.istio.io/inject", "false"}}}, {"labels", Json::object()}};
  return {{"metadata", metadata}, {"spec", spec}};
}

std::map<std::string, std::string> PodLabels(const specs::AppDef& app, int role_idx, int replica_id,
                                             const std::string& job_name, const std::string& torchx_version) {
  const std::string& role = app.roles.at(static_cast<size_t>(role_idx)).name;
  return {{kLabelVersion, LabelValue(torchx_version)},   {kLabelAppName, LabelValue(app.name)},
          {kLabelRoleIndex, std::to_string(role_idx)},   {kLabelRoleName, LabelValue(role)},
          {kLabelReplicaId, std::to_string(replica_id)}, {kLabelK8sName, LabelValue(app.name)},
          {kLabelManagedBy, kManagedByTorchx},           {kLabelInstance, job_name}};
}

Result<Json> AppToVolcanoJob(const specs::AppDef& app, const VolcanoJobOptions& o) {
  if (app.roles.empty()) return InvalidArgumentError("kubernetes: the app has no roles");
  Json tasks = Json::array();
  // Volcano's svc plugin lists each task's hosts in VC_<TASK>_HOSTS ('-' as '_').
  std::string rank0_peer = "VC_" + TaskName(o.job_name, app.roles[0].name, 0) + "_HOSTS";
  std::transform(rank0_peer.begin(), rank0_peer.end(), rank0_peer.begin(),
                 [](unsigned char c) { return c == '-' ? '_' : static_cast<char>(std::toupper(c)); });
  int job_retries = app.roles[0].max_retries;
  std::map<std::string, std::string> task_roles;  // task name -> role, to refuse collisions
  for (size_t role_idx = 0; role_idx < app.roles.size(); ++role_idx) {
    const specs::Role& role = app.roles[role_idx];
    job_retries = std::min(job_retries, role.max_retries);
    Json policies;
    if (role.max_retries > 0) {
      TORCHX_ASSIGN_OR_RETURN(policies, RetryPolicies(app, role));
    }
    for (int i = 0; i < role.num_replicas; ++i) {
      bool rank0 = role_idx == 0 && i == 0;
      // Rank 0 reaches itself on localhost; the others through Volcano's svc plugin, which puts
      // each task's hostnames in VC_<TASK>_HOSTS.
      specs::macros::Values values{"", o.job_name, std::to_string(i), rank0 ? "TORCHX_RANK0_HOST" : rank0_peer};
      specs::Role r = values.Apply(role);
      if (rank0) r.env["TORCHX_RANK0_HOST"] = "localhost";
      r.env["TORCHX_IMAGE"] = r.image;  // as TorchX: the image a replica runs, for tools inside it
      std::string name = TaskName(o.job_name, role.name, i);
      if (auto [it, fresh] = task_roles.emplace(name, role.name); !fresh) {
        return InvalidArgumentError(fmt::format(
            "kubernetes: roles `{}` and `{}` have the same task name `{}` once made a Kubernetes name (lower-case "
            "[a-z0-9-], pod names of at most 63 characters); rename one",
            it->second, role.name, name));
      }

      Json pod = RoleToPod(name, r, o);
      pod["metadata"]["labels"] = PodLabels(app, static_cast<int>(role_idx), i, o.job_name, o.torchx_version);
      const Json& labels = pod["metadata"]["labels"];
      Json task = {{"name", name}, {"replicas", 1}, {"template", pod}};
      if (role.max_retries > 0) {
        task["maxRetry"] = role.max_retries;
        task["policies"] = policies;
      }
      // The first min_replicas tasks are required; the rest may come and go (elastic).
      if (role.min_replicas) task["minAvailable"] = i < *role.min_replicas ? 1 : 0;
      TORCHX_ASSIGN_OR_RETURN(nlohmann::ordered_json overlay, PodOverlay(r));
      if (!overlay.empty()) {
        // The overlay is TorchX's V1Pod overlay: it patches the pod template (metadata, spec).
        nlohmann::ordered_json patched = task["template"];
        if (Status s = specs::overlays::Apply(patched, overlay); !s.ok()) {
          return s.WithContext(fmt::format("kubernetes: role `{}`: metadata.kubernetes V1Pod overlay", role.name));
        }
        specs::overlays::StripTupleMarkers(patched);
        // As TorchX: only the pod's metadata and spec are taken, and TorchX's labels are put back
        // on top (describe, list and logs find the pods by them).
        Json pod_metadata = patched.contains("metadata") && patched["metadata"].is_object() ? Json(patched["metadata"])
                                                                                            : Json::object();
        if (!pod_metadata.contains("labels") || !pod_metadata["labels"].is_object())
          pod_metadata["labels"] = Json::object();
        pod_metadata["labels"].update(labels);
        Json pod_spec = patched.contains("spec") ? Json(patched["spec"]) : Json::object();
        task["template"] = Json{{"metadata", std::move(pod_metadata)}, {"spec", std::move(pod_spec)}};
      }
      tasks.push_back(std::move(task));
    }
  }
  Json spec = {{"schedulerName", "volcano"},
               {"queue", o.queue},
               {"tasks", tasks},
               {"maxRetry", job_retries},
               // Peers must resolve before they are ready (rendezvous happens before readiness).
               {"plugins", {{"svc", Json::array({"--publish-not-ready-addresses"})}, {"env", Json::array()}}}};
  if (!o.priority_class.empty()) spec["priorityClassName"] = o.priority_class;
  // The job carries the app's labels too, so that `list` can select TorchX's jobs.
  Json job_labels = {{kLabelManagedBy, kManagedByTorchx},
                     {kLabelK8sName, LabelValue(app.name)},
                     {kLabelVersion, LabelValue(o.torchx_version)}};
  return Json{{"apiVersion", "batch.volcano.sh/v1alpha1"},
              {"kind", "Job"},
              {"metadata", {{"name", o.job_name}, {"namespace", o.namespace_}, {"labels", job_labels}}},
              {"spec", spec}};
}

namespace {

// A Kubernetes quantity as an integer in `unit`s: "2000m" cpu -> 2; "1024M" / "1Gi" memory -> MB.
int Quantity(const Json& v, bool memory) {
  if (!v.is_string()) return -1;
  std::string s = v;
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits == 0 || digits > 12) return -1;  // not ours, or beyond any machine: unknown
  double n = std::stod(s.substr(0, digits));
  std::string unit = s.substr(digits);
  double value = -1;
  if (!memory) {
    if (unit == "m")
      value = n / 1000;
    else if (unit.empty())
      value = n;
  } else if (unit == "M" || unit == "Mi") {
    value = n;
  } else if (unit == "G") {
    value = n * 1000;
  } else if (unit == "Gi") {
    value = n * 1024;
  } else if (unit.empty()) {
    value = n / (1024 * 1024);
  }
  return value < 0 || value > std::numeric_limits<int>::max() ? -1 : static_cast<int>(value);
}

specs::Role RoleFromTask(const Json& task) {
  specs::Role r;
  const Json tmpl = task.value("template", Json::object());
  const Json labels = tmpl.value("metadata", Json::object()).value("labels", Json::object());
  const Json spec = tmpl.value("spec", Json::object());
  r.name = labels.value(kLabelRoleName, task.value("name", ""));
  const Json containers = spec.value("containers", Json::array());
  if (!containers.is_array() || containers.empty()) return r;
  const Json& c = containers[0];
  r.image = c.value("image", "");
  const Json command = c.value("command", Json::array());
  for (size_t i = 0; command.is_array() && i < command.size(); ++i) {
    if (!command[i].is_string()) continue;
    if (i == 0)
      r.entrypoint = command[i];
    else
      r.args.push_back(command[i]);
  }
  for (const Json& e : c.value("env", Json::array())) {
    std::string name = e.value("name", "");
    // Set per replica here, not by the app.
    if (name.empty() || name == "TORCHX_RANK0_HOST" || name == "TORCHX_IMAGE") continue;
    if (e.contains("valueFrom")) {
      std::string path = e["valueFrom"].value("fieldRef", Json::object()).value("fieldPath", "");
      r.env[name] = std::string(kFieldPath) + path;
    } else {
      r.env[name] = e.value("value", "");
    }
  }
  const Json limits = c.value("resources", Json::object()).value("limits", Json::object());
  r.resource = specs::Resource{-1, 0, -1, {}, {}, {}};
  for (const auto& [k, v] : limits.items()) {
    if (k == "cpu")
      r.resource.cpu = Quantity(v, false);
    else if (k == "memory")
      r.resource.memMB = Quantity(v, true);
    else if (k == "nvidia.com/gpu")
      r.resource.gpu = Quantity(v, false);
    else if (int n = Quantity(v, false); n >= 0)
      r.resource.devices[k] = n;
  }
  const Json selector = spec.value("nodeSelector", Json::object());
  if (selector.is_object() && selector.contains(kInstanceType) && selector[kInstanceType].is_string()) {
    r.resource.capabilities[kInstanceType] = Value(selector[kInstanceType].get<std::string>());
  }
  for (const Json& p : c.value("ports", Json::array())) r.port_map[p.value("name", "")] = p.value("containerPort", 0);
  bool privileged = c.value("securityContext", Json::object()).value("privileged", false);
  std::map<std::string, Json> volumes;
  for (const Json& v : spec.value("volumes", Json::array())) volumes[v.value("name", "")] = v;
  for (const Json& m : c.value("volumeMounts", Json::array())) {
    const Json& v = volumes[m.value("name", "")];
    std::string dst = m.value("mountPath", "");
    bool read_only = m.value("readOnly", false);
    if (v.contains("persistentVolumeClaim")) {
      r.mounts.push_back(specs::VolumeMount{v["persistentVolumeClaim"].value("claimName", ""), dst, read_only});
    } else if (v.contains("hostPath")) {
      std::string src = v["hostPath"].value("path", "");
      if (privileged && src.starts_with("/dev/")) {
        r.mounts.push_back(specs::DeviceMount{src, dst, read_only ? "r" : "rwm"});
      } else {
        r.mounts.push_back(specs::BindMount{src, dst, read_only});
      }
    }
  }
  r.max_retries = task.value("maxRetry", 0);
  for (const Json& p : task.value("policies", Json::array())) {
    if (p.value("action", "") == "RestartTask") r.retry_policy = specs::RetryPolicy::kReplica;
  }
  return r;
}

}  // namespace

specs::AppDef AppFromVolcanoJob(const Json& job) {
  specs::AppDef app;
  const Json meta = job.value("metadata", Json::object());
  app.name = meta.value("name", "");
  std::map<std::string, size_t> index;  // role -> position in app.roles
  std::map<std::string, int> required;  // role -> tasks with minAvailable 1
  std::map<std::string, bool> elastic;
  for (const Json& task : job.value("spec", Json::object()).value("tasks", Json::array())) {
    specs::Role r = RoleFromTask(task);
    if (task.contains("minAvailable")) {
      elastic[r.name] = true;
      required[r.name] += task.value("minAvailable", 0) > 0 ? 1 : 0;
    }
    if (auto it = index.find(r.name); it != index.end()) {
      ++app.roles[it->second].num_replicas;
      continue;
    }
    index[r.name] = app.roles.size();
    app.roles.push_back(std::move(r));
  }
  for (specs::Role& r : app.roles) {
    if (elastic[r.name]) r.min_replicas = required[r.name];
  }
  return app;
}

AppState JobPhaseToState(const std::string& phase) {
  if (phase == "Pending") return AppState::kPending;
  if (phase == "Running" || phase == "Aborting" || phase == "Restarting" || phase == "Terminating" ||
      phase == "Completing") {
    return AppState::kRunning;
  }
  if (phase == "Aborted") return AppState::kCancelled;
  if (phase == "Completed") return AppState::kSucceeded;
  if (phase == "Terminated" || phase == "Failed") return AppState::kFailed;
  return AppState::kUnknown;
}

AppState TaskPhaseToState(const std::string& phase) {
  if (phase == "Pending" || phase == "Allocated" || phase == "Pipelined" || phase == "Binding" || phase == "Bound") {
    return AppState::kPending;
  }
  if (phase == "Running" || phase == "Releasing") return AppState::kRunning;
  if (phase == "Succeeded") return AppState::kSucceeded;
  if (phase == "Failed") return AppState::kFailed;
  return AppState::kUnknown;
}

namespace {

// The gravest cause a pod tells, with its words; nullopt when it tells none.
std::optional<FailureReport> PodCause(const nlohmann::json& pod) {
  if (!pod.is_object()) return std::nullopt;
  std::string name = pod.value("metadata", Json::object()).value("name", "");
  Json status = pod.value("status", Json::object());
  if (!status.is_object()) return std::nullopt;
  auto said = [&](FailureCause cause, const std::string& reason, const std::string& message) {
    return FailureReport{cause, fmt::format("pod {}: {}{}", name, reason, message.empty() ? "" : ": " + message)};
  };
  std::string reason = status.value("reason", ""), message = status.value("message", "");
  static const std::map<std::string, FailureCause, std::less<>> kPodReasons = {
      {"Evicted", FailureCause::kEviction},
      {"Preempting", FailureCause::kPreemption},
      {"NodeLost", FailureCause::kNodeFailure},
      {"NodeShutdown", FailureCause::kNodeFailure},
      {"Terminated", FailureCause::kNodeFailure},
      {"DeadlineExceeded", FailureCause::kTimeLimit},
      {"UnexpectedAdmissionError", FailureCause::kNodeFailure},
  };
  if (auto it = kPodReasons.find(reason); it != kPodReasons.end()) return said(it->second, reason, message);
  // Kubernetes 1.26+: why a pod was disrupted, as a condition.
  static const std::map<std::string, FailureCause, std::less<>> kDisruptions = {
      {"EvictionByEvictionAPI", FailureCause::kEviction},       {"PreemptionByScheduler", FailureCause::kPreemption},
      {"PreemptionByKubeScheduler", FailureCause::kPreemption}, {"DeletionByTaintManager", FailureCause::kNodeFailure},
      {"DeletionByPodGC", FailureCause::kNodeFailure},          {"TerminationByKubelet", FailureCause::kEviction},
  };
  for (const Json& cond : status.value("conditions", Json::array())) {
    if (!cond.is_object() || cond.value("type", "") != "DisruptionTarget" || cond.value("status", "") != "True")
      continue;
    std::string why = cond.value("reason", "");
    if (auto it = kDisruptions.find(why); it != kDisruptions.end()) {
      return said(it->second, why, cond.value("message", ""));
    }
  }
  for (const Json& c : status.value("containerStatuses", Json::array())) {
    if (!c.is_object()) continue;
    Json term = c.value("state", Json::object()).value("terminated", Json::object());
    if (!term.is_object() || term.empty())
      term = c.value("lastState", Json::object()).value("terminated", Json::object());
    if (!term.is_object() || term.empty()) continue;
    int code = term.value("exitCode", 0);
    std::string why = term.value("reason", "");
    if (why == "OOMKilled")
      return said(FailureCause::kOutOfMemory, why, fmt::format("container {}", c.value("name", "")));
    if (code != 0) {
      return said(FailureCause::kUserError, why.empty() ? "Error" : why,
                  fmt::format("container {} exited with code {}", c.value("name", ""), code));
    }
  }
  return std::nullopt;
}

int Gravity(FailureCause c) {
  switch (c) {
    case FailureCause::kNodeFailure:
      return 7;
    case FailureCause::kEviction:
      return 6;
    case FailureCause::kPreemption:
      return 5;
    case FailureCause::kTimeLimit:
      return 4;
    case FailureCause::kOutOfMemory:
      return 3;
    case FailureCause::kUserError:
      return 2;
    default:
      return 1;
  }
}

}  // namespace

FailureReport ClassifyVolcanoEnd(const nlohmann::json& job, const nlohmann::json& pods) {
  Json state = job.is_object() ? job.value("status", Json::object()).value("state", Json::object()) : Json::object();
  if (!state.is_object()) state = Json::object();
  std::string phase = state.value("phase", ""), reason = state.value("reason", ""),
              message = state.value("message", "");
  std::string job_words = reason.empty() ? message : (message.empty() ? reason : reason + ": " + message);
  if (phase == "Aborted" || phase == "Aborting") {
    return {FailureCause::kCancelled, job_words.empty() ? "the job was aborted" : job_words};
  }
  std::optional<FailureReport> gravest;
  if (pods.is_array()) {
    for (const Json& pod : pods) {
      auto cause = PodCause(pod);
      if (cause && (!gravest || Gravity(cause->cause) > Gravity(gravest->cause))) gravest = std::move(cause);
    }
  }
  if (!gravest && reason.find("Evict") != std::string::npos) return {FailureCause::kEviction, job_words};
  if (gravest) return *gravest;
  return {FailureCause::kUnknown, job_words.empty() ? "the job " + (phase.empty() ? "failed" : phase) : job_words};
}

}  // namespace torchx::schedulers::kubernetes
