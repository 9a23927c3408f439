#include "torchx/specs/app_def.h"

#include <set>

#include <fmt/format.h>

namespace torchx::specs {

Resource NullResource() { return Resource{}; }

bool IsNullResource(const Resource& r) { return r.cpu == -1 && r.gpu == -1 && r.memMB == -1; }

std::string_view RetryPolicyName(RetryPolicy p) {
  switch (p) {
    case RetryPolicy::kReplica:
      return "REPLICA";
    case RetryPolicy::kRole:
      return "ROLE";
    case RetryPolicy::kApplication:
      return "APPLICATION";
  }
  return "APPLICATION";
}

Result<RetryPolicy> ParseRetryPolicy(std::string_view s) {
  for (RetryPolicy p : {RetryPolicy::kReplica, RetryPolicy::kRole, RetryPolicy::kApplication}) {
    if (s == RetryPolicyName(p)) return p;
  }
  return InvalidArgumentError(
      fmt::format("retry_policy: invalid value '{}', must be one of [REPLICA, ROLE, APPLICATION]", s));
}

namespace {

// App and role names become directory names (logs), process titles, container and pod names.
// TorchX only requires them to be non-empty; we also refuse what would break a path or a log line.
// Back-ends with stricter rules (Kubernetes, Slurm) normalize names themselves (app_id.h).
Status ValidateName(std::string_view what, std::string_view name) {
  if (name.empty()) return InvalidArgumentError(fmt::format("{}: must not be empty", what));
  if (name == "." || name == "..") {
    return InvalidArgumentError(fmt::format("{}: '{}' is not a valid name", what, name));
  }
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (c == '/' || c == '\\' || u <= 0x20 || u == 0x7f) {
      return InvalidArgumentError(
          fmt::format("{}: '{}' must not contain '/', '\\', whitespace or control characters", what, name));
    }
  }
  return OkStatus();
}

Status ValidateResource(const Role& role) {
  const Resource& r = role.resource;
  if (IsNullResource(r)) return OkStatus();  // the back-end decides (ValidateResources)
  auto negative = [&](std::string_view field, int v) {
    if (v == -1) {  // the value of a field never set: a Resource given in part
      return InvalidArgumentError(fmt::format(
          "role '{}': resource.{}: missing (-1, not set); give all of cpu, gpu and memMB, or none of them for the "
          "scheduler's default",
          role.name, field));
    }
    return InvalidArgumentError(fmt::format("role '{}': resource.{}: must be >= 0, got {}", role.name, field, v));
  };
  if (r.cpu < 0) return negative("cpu", r.cpu);
  if (r.gpu < 0) return negative("gpu", r.gpu);
  if (r.memMB < 0) return negative("memMB", r.memMB);
  for (const auto& [dev, n] : r.devices) {
    if (n < 0) return negative(fmt::format("devices[{}]", dev), n);
  }
  return OkStatus();
}

}  // namespace

Status ValidateAppBasics(const AppDef& app) {
  if (app.roles.empty()) {
    return InvalidArgumentError(fmt::format("app '{}': roles: no roles; an AppDef needs at least one role", app.name));
  }
  for (const Role& role : app.roles) {
    if (role.entrypoint.empty() || role.entrypoint == kMissing) {
      return InvalidArgumentError(fmt::format("role '{}': entrypoint: missing; set the program to run", role.name));
    }
    if (role.num_replicas < 1) {
      return InvalidArgumentError(
          fmt::format("role '{}': num_replicas: must be >= 1, got {}", role.name, role.num_replicas));
    }
  }
  return OkStatus();
}

Status ValidateAppDef(const AppDef& app) {
  TORCHX_RETURN_IF_ERROR(ValidateName("app name", app.name));
  if (app.roles.empty()) {
    return InvalidArgumentError(fmt::format("app '{}': roles: no roles; an AppDef needs at least one role", app.name));
  }
  std::set<std::string> seen;
  for (const Role& role : app.roles) {
    TORCHX_RETURN_IF_ERROR(ValidateName("role name", role.name));
    if (!seen.insert(role.name).second) {
      return InvalidArgumentError(fmt::format("role '{}': name: duplicate role name", role.name));
    }
    if (role.entrypoint.empty() || role.entrypoint == kMissing) {
      return InvalidArgumentError(fmt::format("role '{}': entrypoint: missing; set the program to run", role.name));
    }
    if (role.num_replicas < 1) {
      return InvalidArgumentError(
          fmt::format("role '{}': num_replicas: must be >= 1, got {}", role.name, role.num_replicas));
    }
    if (role.min_replicas) {
      int m = *role.min_replicas;
      if (m < 0 || m > role.num_replicas) {
        return InvalidArgumentError(
            fmt::format("role '{}': min_replicas: must be between 0 and num_replicas ({}), got {}", role.name,
                        role.num_replicas, m));
      }
    }
    if (role.max_retries < 0) {
      return InvalidArgumentError(
          fmt::format("role '{}': max_retries: must be >= 0, got {}", role.name, role.max_retries));
    }
    TORCHX_RETURN_IF_ERROR(ValidateResource(role));
    for (const auto& [port_name, port] : role.port_map) {
      if (port < 0 || port > 65535) {
        return InvalidArgumentError(
            fmt::format("role '{}': port_map[{}]: must be in 0..65535, got {}", role.name, port_name, port));
      }
    }
  }
  return OkStatus();
}

Status ValidateResources(const AppDef& app) {
  for (const Role& role : app.roles) {
    if (IsNullResource(role.resource)) {
      return InvalidArgumentError(
          fmt::format("role '{}': resource: no resource for role (set cpu/gpu/memMB or a named resource)", role.name));
    }
  }
  return OkStatus();
}

}  // namespace torchx::specs
