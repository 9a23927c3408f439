// `ray`: jobs on a Ray cluster through its Job Submission REST API (no Python in the client).
// Each app is one Ray job whose entrypoint is the gang driver shipped with it (ray_driver.py):
// a placement group sized from the roles, one actor per replica running the role's command. App
// ids are TorchX 0.7.0's `<dashboard host:port>-<submission id>`. See docs/ray.md.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/subprocess.h"
#include "http/http.h"
#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers::ray {

/// Reads an environment variable (RAY_ADDRESS, RAY_AUTH_TOKEN); nullopt when unset.
using EnvReader = std::function<std::optional<std::string>(const char* name)>;

/// Every dashboard call goes through `http`; `ray get-head-ip` (cluster_config_file) through
/// `commands`. Null `env` reads the process environment; null `clock` is real time.
std::unique_ptr<Scheduler> MakeRayScheduler(const std::string& session_name, std::shared_ptr<internal::HttpClient> http,
                                            std::shared_ptr<internal::CommandRunner> commands, EnvReader env = nullptr,
                                            std::shared_ptr<const Clock> clock = nullptr);

/// The gang driver the jobs run (ray_driver.py, embedded at build time).
const char* RayDriverSource();

/// `ray` over libcurl, for the build's table of back-ends.
std::vector<SchedulerEntry> BackendSchedulers();

}  // namespace torchx::schedulers::ray
