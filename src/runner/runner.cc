#include "torchx/runner/runner.h"

#include <algorithm>
#include <cstdlib>
#include <random>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "torchx/components/finder.h"
#include "torchx/plugins/registry.h"
#include "core/spelling.h"
#include "torchx/specs/app_handle.h"

namespace torchx::runner {
namespace {

std::string NewUuid4() {
  std::random_device rd;
  std::uniform_int_distribution<int> hex(0, 15);
  const char* digits = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) out += '-';
    int d = hex(rd);
    if (i == 12) d = 4;                 // version 4
    if (i == 16) d = 8 | (d & 3);       // variant 10xx
    out += digits[d];
  }
  return out;
}

}  // namespace

std::string RunnerSessionId() {
  static const std::string id = [] {
    const char* env = std::getenv("TORCHX_INTERNAL_SESSION_ID");
    return env && *env ? std::string(env) : NewUuid4();
  }();
  return id;
}

Runner::Runner(RunnerOptions options)
    : Runner(std::move(options), [] {
        schedulers::SchedulerRegistry r;
        schedulers::RegisterBuiltinSchedulers(r);
        return r;
      }(), [] {
        auto c = std::make_shared<components::ComponentRegistry>();
        components::RegisterBuiltinComponents(*c);
        return c;
      }()) {}

Runner::Runner(RunnerOptions options, schedulers::SchedulerRegistry schedulers,
               std::shared_ptr<components::ComponentRegistry> components)
    : options_(std::move(options)), registry_(std::move(schedulers)), components_(std::move(components)) {
  // Installs the registry's sources for plugin named resources and device chip counts (cheap: no
  // discovery happens until a name is not built in).
  if (options_.use_plugins) (void)plugins::PluginRegistry::Global();
}

Runner::~Runner() = default;

Result<schedulers::Scheduler*> Runner::GetScheduler(const std::string& name) {
  auto it = schedulers_.find(name);
  if (it != schedulers_.end()) return it->second.get();
  // Built-ins first, so that a builtin scheduler never pays for plugin discovery.
  if (!registry_.Contains(name) && options_.use_plugins) {
    if (auto factory = plugins::PluginRegistry::Global().Scheduler(name)) {
      TORCHX_ASSIGN_OR_RETURN(auto sched, (*factory)(options_.session_name));
      return schedulers_.emplace(name, std::move(sched)).first->second.get();
    }
    return NotFoundError(fmt::format("scheduler: unknown scheduler `{}`. Valid choices: {}{}", name,
                                     fmt::join(SchedulerBackends(), ", "),
                                     internal::SuggestionSuffix(name, SchedulerBackends())));
  }
  TORCHX_ASSIGN_OR_RETURN(auto sched, registry_.Create(name, options_.session_name));
  return schedulers_.emplace(name, std::move(sched)).first->second.get();
}

Result<std::pair<schedulers::Scheduler*, std::string>> Runner::SchedulerFor(const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(specs::ParsedAppHandle parsed, specs::ParseAppHandle(handle));
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(parsed.scheduler_backend));
  return std::make_pair(sched, parsed.app_id);
}

Result<schedulers::DryRunInfo> Runner::DryRun(specs::AppDef app, const std::string& scheduler,
                                              const specs::Cfg& cfg, const std::string& workspace) {
  TORCHX_RETURN_IF_ERROR(specs::ValidateAppDef(app));
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(scheduler));
  // TorchX's runner tells every replica who it is and which runner session launched it.
  std::string job_id = specs::MakeAppHandle(scheduler, options_.session_name, "${app_id}");
  const char* parent = std::getenv("TORCHX_PARENT_RUN_ID");
  for (specs::Role& role : app.roles) {
    role.env["TORCHX_JOB_ID"] = job_id;
    role.env["TORCHX_INTERNAL_SESSION_ID"] = RunnerSessionId();
    if (parent && *parent) role.env["TORCHX_PARENT_RUN_ID"] = parent;
  }
  if (!workspace.empty()) {
    // Options are checked before the (slow, image-leaving) build, which then sees their typed values.
    TORCHX_ASSIGN_OR_RETURN(specs::Cfg resolved, sched->run_opts().Resolve(cfg));
    TORCHX_RETURN_IF_ERROR(sched->BuildWorkspace(workspace, app, resolved));
  }
  return sched->SubmitDryRun(app, cfg);
}

Result<std::string> Runner::Schedule(const schedulers::DryRunInfo& info) {
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(info.scheduler));
  TORCHX_ASSIGN_OR_RETURN(std::string app_id, sched->Schedule(info));
  return specs::MakeAppHandle(info.scheduler, options_.session_name, app_id);
}

Result<std::string> Runner::Run(specs::AppDef app, const std::string& scheduler, const specs::Cfg& cfg) {
  TORCHX_ASSIGN_OR_RETURN(auto info, DryRun(std::move(app), scheduler, cfg));
  return Schedule(info);
}

Result<components::ResolvedComponent> Runner::ResolveComponent(const std::string& component) {
  auto resolved = components::ResolveComponent(*components_, component);
  if (resolved || resolved.error().code() != StatusCode::kNotFound || !options_.use_plugins) return resolved;
  auto plugin = plugins::PluginRegistry::Global().Component(component);
  if (!plugin) return resolved;
  components::ResolvedComponent out;
  out.component = plugin.get();
  plugin_components_.push_back(std::move(plugin));  // keeps it alive while the Runner lives
  return out;
}

Result<specs::AppDef> Runner::ComponentAppDef(const std::string& component, const std::vector<std::string>& args) {
  TORCHX_ASSIGN_OR_RETURN(auto resolved, ResolveComponent(component));
  const components::Component& c = *resolved.component;
  TORCHX_ASSIGN_OR_RETURN(auto parsed, components::ParseComponentArgs(c.spec(), args, DefaultsFor(c.spec().name)));
  return components::BuildAppDef(c, parsed);
}

Result<specs::AppDef> Runner::ComponentAppDefFromJson(const std::string& component, std::string_view args_json) {
  TORCHX_ASSIGN_OR_RETURN(auto resolved, ResolveComponent(component));
  const components::Component& c = *resolved.component;
  TORCHX_ASSIGN_OR_RETURN(auto parsed,
                          components::ComponentArgsFromJson(c.spec(), args_json, DefaultsFor(c.spec().name)));
  return components::BuildAppDef(c, parsed);
}

const components::ConfigDefaults& Runner::DefaultsFor(const std::string& component) const {
  static const components::ConfigDefaults kNone;
  auto it = options_.component_defaults.find(component);
  return it == options_.component_defaults.end() ? kNone : it->second;
}

Result<schedulers::DryRunInfo> Runner::DryRunComponent(const std::string& component,
                                                       const std::vector<std::string>& args,
                                                       const std::string& scheduler, const specs::Cfg& cfg,
                                                       const std::string& workspace) {
  TORCHX_ASSIGN_OR_RETURN(specs::AppDef app, ComponentAppDef(component, args));
  return DryRun(std::move(app), scheduler, cfg, workspace);
}

Result<std::string> Runner::RunComponent(const std::string& component, const std::vector<std::string>& args,
                                         const std::string& scheduler, const specs::Cfg& cfg) {
  TORCHX_ASSIGN_OR_RETURN(auto info, DryRunComponent(component, args, scheduler, cfg));
  return Schedule(info);
}

Result<std::optional<specs::AppStatus>> Runner::Status(const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  TORCHX_ASSIGN_OR_RETURN(auto desc, sa.first->Describe(sa.second));
  if (!desc) return std::optional<specs::AppStatus>();
  specs::AppStatus s;
  s.state = desc->state;
  s.num_restarts = desc->num_restarts;
  s.msg = desc->msg;
  s.structured_error_msg = desc->structured_error_msg;
  s.ui_url = desc->ui_url;
  s.roles = desc->roles_statuses;
  return std::optional<specs::AppStatus>(std::move(s));
}

Result<std::optional<specs::AppStatus>> Runner::Wait(const std::string& handle, std::chrono::milliseconds interval,
                                                     std::optional<std::chrono::milliseconds> timeout) {
  auto deadline = timeout ? std::optional(std::chrono::steady_clock::now() + *timeout) : std::nullopt;
  while (true) {
    TORCHX_ASSIGN_OR_RETURN(auto status, Status(handle));
    if (!status || status->is_terminal()) return status;
    auto wait = interval;
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        return ::torchx::Status(StatusCode::kDeadlineExceeded,
                                fmt::format("wait: {} still {} after the timeout", handle,
                                            specs::AppStateName(status->state)));
      }
      wait = std::min(wait, left);
    }
    WaitForUpdate(handle, wait);
  }
}

void Runner::WaitForUpdate(const std::string& handle, std::chrono::milliseconds max_wait) {
  auto sa = SchedulerFor(handle);
  if (!sa) {
    std::this_thread::sleep_for(max_wait);
    return;
  }
  sa->first->WaitForUpdate(sa->second, max_wait);
}

::torchx::Status Runner::Cancel(const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  return sa.first->Cancel(sa.second);
}

::torchx::Status Runner::Delete(const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  return sa.first->Delete(sa.second);
}

Result<std::optional<specs::AppDef>> Runner::Describe(const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  TORCHX_ASSIGN_OR_RETURN(auto desc, sa.first->Describe(sa.second));
  if (!desc) return std::optional<specs::AppDef>();
  if (desc->app) return desc->app;
  // Back-ends that do not keep the AppDef: TorchX names it after the app id; the roles (and how
  // many replicas each has) come from the role statuses.
  specs::AppDef app;
  app.name = sa.second;
  for (const specs::RoleStatus& rs : desc->roles_statuses) {
    specs::Role role;
    role.name = rs.role;
    role.num_replicas = static_cast<int>(rs.replicas.size());
    app.roles.push_back(std::move(role));
  }
  return std::optional<specs::AppDef>(std::move(app));
}

Result<std::unique_ptr<schedulers::LogIterator>> Runner::LogLines(const std::string& handle,
                                                                  const schedulers::LogOptions& options) {
  // Checked once here for every back-end: std::regex throws on a bad pattern, inside LogIter or on
  // a followed stream's thread.
  if (options.regex) {
    try {
      std::regex check(*options.regex);
    } catch (const std::regex_error& e) {
      return InvalidArgumentError(fmt::format("regex: invalid pattern '{}': {}", *options.regex, e.what()));
    }
  }
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  TORCHX_ASSIGN_OR_RETURN(auto desc, sa.first->Describe(sa.second));
  if (!desc) return NotFoundError(fmt::format("log: app {} does not exist", handle));
  if (desc->app) {
    std::vector<std::string> roles;
    const specs::Role* found = nullptr;
    for (const specs::Role& r : desc->app->roles) {
      roles.push_back(r.name);
      if (r.name == options.role) found = &r;
    }
    if (!found) {
      std::string list;
      for (const auto& r : roles) list += (list.empty() ? "" : ", ") + r;
      return NotFoundError(fmt::format("log: role `{}` not in app {}; roles: [{}]", options.role, handle, list));
    }
    if (options.replica < 0 || options.replica >= found->num_replicas) {
      return NotFoundError(fmt::format("log: replica {} not in role {} (0..{})", options.replica, options.role,
                                       found->num_replicas - 1));
    }
  }
  return sa.first->LogIter(sa.second, options);
}

Result<std::vector<schedulers::ListAppResponse>> Runner::List(const std::string& scheduler) {
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(scheduler));
  TORCHX_ASSIGN_OR_RETURN(auto apps, sched->List());
  for (auto& a : apps) a.app_handle = specs::MakeAppHandle(scheduler, options_.session_name, a.app_id);
  return apps;
}

Result<specs::RunOpts> Runner::SchedulerRunOpts(const std::string& scheduler) {
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(scheduler));
  return sched->run_opts();
}

std::vector<std::string> Runner::SchedulerBackends() const {
  std::vector<std::string> names = registry_.Names();
  if (!options_.use_plugins) return names;
  for (const std::string& n : plugins::PluginRegistry::Global().Names(plugins::PluginType::kScheduler)) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  return names;
}

}  // namespace torchx::runner
