#include "torchx/runner/runner.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "core/spelling.h"
#include "schedulers/line_filter.h"
#include "torchx/components/finder.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/named_resources.h"

namespace torchx::runner {
namespace {

// kUnimplemented naming the scheduler and the capability it lacks: what the layers above say
// instead of naming back-ends.
::torchx::Status Require(const schedulers::Scheduler& sched, schedulers::Capability c) {
  if (sched.capabilities().Has(c)) return OkStatus();
  return UnimplementedError(
      fmt::format("scheduler {} does not support {}", sched.backend(), schedulers::CapabilityDescription(c)));
}

std::string NewUuid4() {
  std::random_device rd;
  std::uniform_int_distribution<int> hex(0, 15);
  const char* digits = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) out += '-';
    int d = hex(rd);
    if (i == 12) d = 4;            // version 4
    if (i == 16) d = 8 | (d & 3);  // variant 10xx
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

// The schedulers a Runner made: one per name for back-ends that keep state in their instance,
// else one per (thread, name). Instances live in map nodes, so a pointer handed out stays valid
// for as long as the Runner: what was made from one (a log a reader thread still follows) may
// outlive the call and the thread that made it.
struct Runner::SchedulerCache {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<schedulers::Scheduler>> shared;
  std::map<std::pair<std::thread::id, std::string>, std::unique_ptr<schedulers::Scheduler>> per_thread;
  // Instances whose thread has exited, by name: the next new thread takes one over rather than
  // make another, so threads that come and go leave at most as many as ran at once.
  std::multimap<std::string, std::unique_ptr<schedulers::Scheduler>> idle;

  // The instance this thread uses, and whether it was just taken over from an exited thread.
  std::pair<schedulers::Scheduler*, bool> Find(const std::string& name) {
    std::lock_guard lock(mu);
    if (auto it = shared.find(name); it != shared.end()) return {it->second.get(), false};
    std::pair<std::thread::id, std::string> key{std::this_thread::get_id(), name};
    if (auto it = per_thread.find(key); it != per_thread.end()) return {it->second.get(), false};
    if (auto it = idle.find(name); it != idle.end()) {
      schedulers::Scheduler* adopted = it->second.get();
      per_thread.emplace(std::move(key), std::move(it->second));
      idle.erase(it);
      return {adopted, true};
    }
    return {nullptr, false};
  }
  // Keeps `made` unless another thread kept a shared instance of the name first (then `made` is
  // dropped, by the caller, outside the lock).
  schedulers::Scheduler* Keep(const std::string& name, std::unique_ptr<schedulers::Scheduler>& made) {
    std::lock_guard lock(mu);
    if (auto it = shared.find(name); it != shared.end()) return it->second.get();
    auto& slot = made->instance_per_thread() ? per_thread[{std::this_thread::get_id(), name}] : shared[name];
    slot = std::move(made);
    return slot.get();
  }
  // A thread has exited: its instances go idle (not destroyed: what was made from them may still
  // be in use), for the next new thread to take over.
  void ThreadExited(std::thread::id id) {
    std::lock_guard lock(mu);
    for (auto it = per_thread.begin(); it != per_thread.end();) {
      if (it->first.first == id) {
        idle.emplace(it->first.second, std::move(it->second));
        it = per_thread.erase(it);
      } else {
        ++it;
      }
    }
  }
};

namespace {

// The caches a thread made instances in: each is told when the thread exits, so a thread id the
// system reuses finds nothing of the old thread's, and a short-lived thread's instances serve the
// next one. A Runner gone first is skipped.
struct ThreadsCaches {
  std::vector<std::weak_ptr<Runner::SchedulerCache>> caches;
  ~ThreadsCaches() {
    for (auto& weak : caches) {
      if (auto cache = weak.lock()) cache->ThreadExited(std::this_thread::get_id());
    }
  }
  void Note(const std::shared_ptr<Runner::SchedulerCache>& cache) {
    std::erase_if(caches, [](const auto& w) { return w.expired(); });
    for (const auto& w : caches) {
      if (!w.owner_before(cache) && !cache.owner_before(w)) return;
    }
    caches.push_back(cache);
  }
};
thread_local ThreadsCaches t_caches;

}  // namespace

Runner::Runner(plugins::PluginRegistry& registry, RunnerOptions options)
    : registry_(registry),
      options_(std::move(options)),
      clock_(options_.clock ? options_.clock : std::make_shared<SystemClock>()),
      schedulers_(std::make_shared<SchedulerCache>()) {}

Runner::~Runner() = default;

Result<schedulers::Scheduler*> Runner::GetScheduler(const std::string& name) {
  if (auto [found, adopted] = schedulers_->Find(name); found) {
    if (adopted) t_caches.Note(schedulers_);
    return found;
  }
  // A built-in is found without discovering plugins; any other name discovers them first.
  std::optional<schedulers::SchedulerFactory> factory;
  if (options_.schedulers) {
    auto given = options_.schedulers->find(name);
    if (given != options_.schedulers->end()) factory = given->second;
  } else {
    factory = registry_.Scheduler(name);
  }
  if (!factory) {
    std::vector<std::string> names = SchedulerBackends();
    return NotFoundError(fmt::format("{}{}`. Valid choices: {}.{}", kUnknownSchedulerMessage, name,
                                     fmt::join(names, ", "), internal::DidYouMeanSuffix(name, names)));
  }
  schedulers::SchedulerContext context;
  context.session_name = options_.session_name;
  context.devices = &registry_.devices();
  context.clock = clock_;
  if (auto it = options_.scheduler_settings.find(name); it != options_.scheduler_settings.end()) {
    context.settings = it->second;
  }
  // Made without the cache's lock: a Python plugin's factory takes the GIL, which a thread
  // waiting for the lock may hold.
  TORCHX_ASSIGN_OR_RETURN(auto sched, (*factory)(context));
  schedulers::Scheduler* kept = schedulers_->Keep(name, sched);
  if (kept->instance_per_thread()) t_caches.Note(schedulers_);
  return kept;
}

::torchx::Status Runner::ValidateApp(const specs::AppDef& app, const std::string& scheduler) {
  // An unknown scheduler is reported after the app's own errors (by ResolveCfg), as before.
  auto sched = GetScheduler(scheduler);
  if (sched && (*sched)->checks_app_itself()) return specs::ValidateAppBasics(app);
  return specs::ValidateAppDef(app);
}

Result<std::pair<schedulers::Scheduler*, std::string>> Runner::SchedulerFor(const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(specs::ParsedAppHandle parsed, specs::ParseAppHandle(handle));
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(parsed.scheduler_backend));
  return std::make_pair(sched, parsed.app_id);
}

Result<specs::ResolvedCfg> Runner::ResolveCfg(const std::string& scheduler, const specs::Cfg& cfg) {
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(scheduler));
  return sched->run_opts().Resolve(cfg);
}

Result<schedulers::DryRunInfo> Runner::DryRun(specs::AppDef app, const std::string& scheduler, const specs::Cfg& cfg,
                                              const std::string& workspace) {
  TORCHX_RETURN_IF_ERROR(ValidateApp(app, scheduler));  // as TorchX: the app's errors before the options'
  TORCHX_ASSIGN_OR_RETURN(specs::ResolvedCfg resolved, ResolveCfg(scheduler, cfg));
  return DryRunValidated(std::move(app), scheduler, resolved, workspace, options_.tracking);
}

Result<schedulers::DryRunInfo> Runner::DryRun(specs::AppDef app, const std::string& scheduler,
                                              const specs::ResolvedCfg& cfg, const std::string& workspace,
                                              const specs::Tracking& tracking) {
  TORCHX_RETURN_IF_ERROR(ValidateApp(app, scheduler));
  return DryRunValidated(std::move(app), scheduler, cfg, workspace, tracking);
}

Result<schedulers::DryRunInfo> Runner::DryRun(specs::AppDef app, const std::string& scheduler,
                                              const specs::ResolvedCfg& cfg, const std::string& workspace) {
  TORCHX_RETURN_IF_ERROR(ValidateApp(app, scheduler));
  return DryRunValidated(std::move(app), scheduler, cfg, workspace, options_.tracking);
}

Result<schedulers::DryRunInfo> Runner::DryRunValidated(specs::AppDef app, const std::string& scheduler,
                                                       const specs::ResolvedCfg& cfg, const std::string& workspace,
                                                       const specs::Tracking& tracking) {
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(scheduler));
  // TorchX's Runner asks the scheduler (Scheduler._validate): most refuse a role without a resource.
  if (sched->requires_resources()) TORCHX_RETURN_IF_ERROR(specs::ValidateResources(app));
  // TorchX's runner tells every replica who it is and which runner session launched it.
  std::string job_id = specs::MakeAppHandle(scheduler, options_.session_name, "${app_id}");
  const auto tracking_env = specs::TrackingEnv(tracking);
  for (specs::Role& role : app.roles) {
    role.env["TORCHX_JOB_ID"] = job_id;
    role.env["TORCHX_INTERNAL_SESSION_ID"] = RunnerSessionId();
    for (const auto& [key, value] : tracking_env) role.env[key] = value;
  }
  // Options are checked before the (slow, image-leaving) build, which sees their typed values;
  // without one, SubmitDryRun checks them.
  if (!workspace.empty()) {
    if (::torchx::Status s = Require(*sched, schedulers::Capability::kWorkspace); !s.ok()) {
      return UnimplementedError(fmt::format("{} (asked to build {})", s.message(), workspace));
    }
    TORCHX_RETURN_IF_ERROR(cfg.CheckResolvedBy(sched->run_opts(), scheduler));
    TORCHX_RETURN_IF_ERROR(sched->BuildWorkspace(workspace, app, cfg));
  }
  return sched->SubmitDryRun(app, cfg);
}

Result<schedulers::DryRunInfo> Runner::BackendDryRun(const std::string& scheduler, const specs::AppDef& app,
                                                     const specs::Cfg& cfg) {
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(scheduler));
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

Result<std::shared_ptr<const components::Component>> Runner::Component(const std::string& name) {
  return components::ResolveComponent(registry_.components(), name, &registry_.named_resources(),
                                      options_.component_load_timeout);
}

Result<std::string> Runner::ComponentHelp(const std::string& name) {
  TORCHX_ASSIGN_OR_RETURN(auto component, Component(name));
  return components::ComponentHelp(component->spec());
}

std::vector<std::string> Runner::ComponentNames() const { return registry_.Names(plugins::PluginType::kComponent); }

Result<specs::Resource> Runner::NamedResource(const std::string& name) const {
  return specs::GetNamedResource(name, &registry_.named_resources());
}

std::vector<std::string> Runner::NamedResourceNames() const {
  return specs::NamedResourceNames(&registry_.named_resources());
}

components::BuildContext Runner::build_context() const {
  return components::BuildContext{&registry_.named_resources(), &registry_.devices()};
}

Result<specs::AppDef> Runner::ComponentAppDef(const std::string& component, const std::vector<std::string>& args) {
  TORCHX_ASSIGN_OR_RETURN(auto c, Component(component));
  TORCHX_ASSIGN_OR_RETURN(auto parsed, components::ParseComponentArgs(c->spec(), args, DefaultsFor(c->spec().name)));
  return components::BuildAppDef(*c, parsed, build_context());
}

Result<specs::AppDef> Runner::ComponentAppDefFromJson(const std::string& component, std::string_view args_json) {
  TORCHX_ASSIGN_OR_RETURN(auto c, Component(component));
  TORCHX_ASSIGN_OR_RETURN(auto parsed,
                          components::ComponentArgsFromJson(c->spec(), args_json, DefaultsFor(c->spec().name)));
  return components::BuildAppDef(*c, parsed, build_context());
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
  auto deadline = timeout ? std::optional(clock_->Now() + *timeout) : std::nullopt;
  // An engine that cannot be reached for a while (a batch controller restarting, a container engine or an
  // API server coming back) is waited out, polling no faster than every 5 s; one that stays
  // unreachable for longer than this is the caller's error.
  constexpr auto kOutageLimit = std::chrono::minutes(10);
  std::optional<std::chrono::steady_clock::time_point> outage_since;
  while (true) {
    auto status = Status(handle);
    if (!status && status.error().code() == StatusCode::kUnavailable) {
      if (!outage_since) outage_since = clock_->Now();
      if (clock_->Now() - *outage_since >= kOutageLimit || (deadline && clock_->Now() >= *deadline)) {
        return status.error();
      }
      clock_->SleepFor(std::max(interval, std::chrono::milliseconds(5000)));
      continue;
    }
    outage_since.reset();
    if (!status) return status.error();
    if (!*status || (*status)->is_terminal()) return std::move(*status);
    auto wait = interval;
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - clock_->Now());
      if (left.count() <= 0) {
        return ::torchx::Status(
            StatusCode::kDeadlineExceeded,
            fmt::format("wait: {} still {} after the timeout", handle, specs::AppStateName((*status)->state)));
      }
      wait = std::min(wait, left);
    }
    WaitForUpdate(handle, wait);
  }
}

bool Runner::WaitForUpdate(const std::string& handle, std::chrono::milliseconds max_wait) {
  auto sa = SchedulerFor(handle);
  // Back-ends that cannot notify leave the waiting to the clock.
  if (sa && sa->first->WaitForUpdate(sa->second, max_wait)) return true;
  clock_->SleepFor(max_wait);
  return false;
}

bool Runner::WaitForAnyUpdate(const std::vector<std::string>& handles, std::chrono::milliseconds max_wait) {
  if (handles.size() == 1) return WaitForUpdate(handles[0], max_wait);
  schedulers::Scheduler* shared = nullptr;
  std::vector<std::string> ids;
  for (const std::string& h : handles) {
    auto sa = SchedulerFor(h);
    if (!sa || (shared && sa->first != shared)) {
      shared = nullptr;
      break;
    }
    shared = sa->first;
    ids.push_back(sa->second);
  }
  if (shared && shared->WaitForAnyUpdate(ids, max_wait)) return true;
  clock_->SleepFor(max_wait);
  return false;
}

::torchx::Status Runner::Cancel(const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  return sa.first->Cancel(sa.second);
}

Result<Runner::CancelOutcome> Runner::RequestCancel(const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  using Kind = CancelOutcome::Kind;
  if (sa.first->capabilities().Has(schedulers::Capability::kComposite)) {
    TORCHX_RETURN_IF_ERROR(sa.first->Cancel(sa.second));
    TORCHX_ASSIGN_OR_RETURN(auto after, Status(handle));
    if (!after) return CancelOutcome{Kind::kNotFound, specs::AppState::kUnknown};
    bool ended_before = specs::IsTerminal(after->state) && after->state != specs::AppState::kCancelled;
    return CancelOutcome{ended_before ? Kind::kAlreadyEnded : Kind::kRequested, after->state};
  }
  TORCHX_ASSIGN_OR_RETURN(auto before, Status(handle));
  if (!before) return CancelOutcome{Kind::kNotFound, specs::AppState::kUnknown};
  if (specs::IsTerminal(before->state)) return CancelOutcome{Kind::kAlreadyEnded, before->state};
  TORCHX_RETURN_IF_ERROR(sa.first->Cancel(sa.second));
  auto after = Status(handle);
  return CancelOutcome{Kind::kRequested, after && *after ? (*after)->state : before->state};
}

::torchx::Status Runner::Delete(const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  TORCHX_RETURN_IF_ERROR(Require(*sa.first, schedulers::Capability::kDelete));
  return sa.first->Delete(sa.second);
}

Result<std::vector<schedulers::ReplicaAttempt>> Runner::Attempts(const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  // No history kept: none to show (not an error; the dashboard asks every app).
  if (!sa.first->capabilities().Has(schedulers::Capability::kAttemptHistory)) {
    return std::vector<schedulers::ReplicaAttempt>();
  }
  return sa.first->Attempts(sa.second);
}

Result<std::optional<std::vector<ReplicaLogTail>>> Runner::FailureTails(const std::string& handle, size_t lines) {
  TORCHX_ASSIGN_OR_RETURN(auto status, Status(handle));
  if (!status) return std::optional<std::vector<ReplicaLogTail>>();
  std::vector<ReplicaLogTail> out;
  if (status->state != specs::AppState::kFailed) return std::optional(std::move(out));
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  if (!sa.first->capabilities().Has(schedulers::Capability::kLogs)) return std::optional(std::move(out));
  std::vector<const specs::ReplicaStatus*> failed, all;
  for (const specs::RoleStatus& role : status->roles) {
    for (const specs::ReplicaStatus& r : role.replicas) {
      all.push_back(&r);
      if (r.state == specs::AppState::kFailed) failed.push_back(&r);
    }
  }
  constexpr size_t kMaxReplicas = 8;  // a 500-replica job that failed as one needs no 500 tails
  const auto& pick = failed.empty() ? all : failed;
  for (size_t i = 0; i < pick.size() && i < kMaxReplicas; ++i) {
    ReplicaLogTail tail{pick[i]->role, pick[i]->id, "stderr", {}};
    schedulers::LogOptions o;
    o.role = tail.role;
    o.replica = tail.replica_id;
    o.stream = schedulers::LogStream::kStderr;
    o.last_lines = lines;
    auto it = LogLines(handle, o);
    if (!it) {  // no separate stderr: the one log there is
      o.stream = schedulers::LogStream::kCombined;
      tail.stream = "combined";
      it = LogLines(handle, o);
    }
    if (!it) continue;
    while (true) {
      auto more = (*it)->NextBatch([&](std::string_view line) {
        if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
        if (line.size() > ReplicaLogTail::kMaxTailLineBytes) line = line.substr(0, ReplicaLogTail::kMaxTailLineBytes);
        tail.lines.emplace_back(line);
      });
      if (!more || !*more) break;
    }
    out.push_back(std::move(tail));
  }
  return std::optional(std::move(out));
}

Result<std::optional<schedulers::AppUsage>> Runner::ResourceUsage(const std::string& handle,
                                                                  const schedulers::UsageOptions& options) {
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  TORCHX_RETURN_IF_ERROR(Require(*sa.first, schedulers::Capability::kResourceUsage));
  return sa.first->ResourceUsage(sa.second, options);
}

Result<std::optional<std::vector<schedulers::ProcessStack>>> Runner::DumpStacks(
    const std::string& handle, const schedulers::StackOptions& options) {
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  TORCHX_RETURN_IF_ERROR(Require(*sa.first, schedulers::Capability::kStacks));
  return sa.first->DumpStacks(sa.second, options);
}

::torchx::Status Runner::Profile(const std::string& handle, const schedulers::ProfileOptions& options) {
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  TORCHX_RETURN_IF_ERROR(Require(*sa.first, schedulers::Capability::kStacks));
  return sa.first->Profile(sa.second, options);
}

Result<std::optional<std::vector<schedulers::MemberApp>>> Runner::Members(const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  using Members = std::vector<schedulers::MemberApp>;
  // Only a composite has members: the app page asks on every refresh, and an ordinary app's
  // scheduler is not asked again for what it cannot have.
  if (!sa.first->capabilities().Has(schedulers::Capability::kComposite)) return std::optional<Members>(Members{});
  TORCHX_ASSIGN_OR_RETURN(auto desc, sa.first->Describe(sa.second));
  if (!desc) return std::optional<Members>();
  return std::optional<Members>(std::move(desc->members));
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

Result<std::optional<schedulers::DryRunInfo>> Runner::DescribeNative(const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  TORCHX_RETURN_IF_ERROR(Require(*sa.first, schedulers::Capability::kDescribeNative));
  TORCHX_ASSIGN_OR_RETURN(auto info, sa.first->DescribeNative(sa.second));
  if (info) {
    info->scheduler = sa.first->backend();
    if (info->app_id.empty()) info->app_id = sa.second;
  }
  return info;
}

Result<std::optional<std::string>> Runner::CompositeDefinition(const std::string& handle, bool json) {
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  if (!sa.first->capabilities().Has(schedulers::Capability::kComposite)) return std::optional<std::string>();
  return sa.first->CompositeDefinition(handle, json);
}

Result<std::optional<std::string>> Runner::CompositeSection(const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  if (!sa.first->capabilities().Has(schedulers::Capability::kComposite)) return std::optional<std::string>();
  return sa.first->CompositeSection(handle);
}

Result<std::unique_ptr<schedulers::LogIterator>> Runner::LogLines(const std::string& handle,
                                                                  const schedulers::LogOptions& options) {
  // The one line filter for every back-end: compiled (and a bad pattern refused) before the
  // back-end is asked, applied to its lines here; back-ends never see the pattern, except those
  // whose API takes it (Scheduler::applies_log_filter).
  std::optional<schedulers::LineFilter> filter;
  if (options.regex) {
    TORCHX_ASSIGN_OR_RETURN(filter, schedulers::LineFilter::Compile(*options.regex));
  }
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  TORCHX_RETURN_IF_ERROR(Require(*sa.first, schedulers::Capability::kLogs));
  if (options.follow) TORCHX_RETURN_IF_ERROR(Require(*sa.first, schedulers::Capability::kFollowLogs));
  if (options.attempt) TORCHX_RETURN_IF_ERROR(Require(*sa.first, schedulers::Capability::kAttemptHistory));
  if (options.driver && !sa.first->capabilities().Has(schedulers::Capability::kComposite)) {
    std::string composites;
    for (const std::string& name : SchedulerBackends()) {
      auto caps = SchedulerCapabilities(name);
      if (caps && caps->Has(schedulers::Capability::kComposite)) composites += (composites.empty() ? "" : ", ") + name;
    }
    return InvalidArgumentError(fmt::format(
        "log: {} has no driver log: only a composite app has one (an app of scheduler {})", handle, composites));
  }
  TORCHX_ASSIGN_OR_RETURN(auto desc, sa.first->Describe(sa.second));
  if (!desc) return NotFoundError(fmt::format("{}{} does not exist", kUnknownAppLogMessage, handle));
  if (desc->app && !options.driver) {
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
  schedulers::LogOptions asked = options;
  asked.last_lines.reset();
  std::unique_ptr<schedulers::LogIterator> lines;
  if (sa.first->applies_log_filter()) {
    TORCHX_ASSIGN_OR_RETURN(lines, sa.first->LogIter(sa.second, asked));
  } else {
    asked.regex.reset();
    TORCHX_ASSIGN_OR_RETURN(lines, sa.first->LogIter(sa.second, asked));
    if (filter) lines = schedulers::FilterLogLines(std::move(lines), std::move(*filter));
  }
  if (options.last_lines) lines = schedulers::LastLogLines(std::move(lines), *options.last_lines);
  return lines;
}

Result<std::vector<schedulers::ListAppResponse>> Runner::List(const std::string& scheduler) {
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(scheduler));
  TORCHX_RETURN_IF_ERROR(Require(*sched, schedulers::Capability::kList));
  TORCHX_ASSIGN_OR_RETURN(auto apps, sched->List());
  for (auto& a : apps) a.app_handle = specs::MakeAppHandle(scheduler, options_.session_name, a.app_id);
  return apps;
}

Result<std::vector<schedulers::HostInfo>> Runner::Hosts(const std::string& scheduler) {
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(scheduler));
  TORCHX_RETURN_IF_ERROR(Require(*sched, schedulers::Capability::kHosts));
  TORCHX_ASSIGN_OR_RETURN(auto hosts, sched->Hosts());
  for (auto& h : hosts) {
    for (auto& a : h.apps) a.handle = specs::MakeAppHandle(scheduler, options_.session_name, a.app_id);
  }
  return hosts;
}

Result<specs::RunOpts> Runner::SchedulerRunOpts(const std::string& scheduler) {
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(scheduler));
  return sched->run_opts();
}

Result<std::string> Runner::SchedulerHelper(const std::string& scheduler, std::string_view function,
                                            std::string_view args_json) {
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(scheduler));
  return sched->Helper(function, args_json);
}

Result<schedulers::Capabilities> Runner::SchedulerCapabilities(const std::string& scheduler) {
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(scheduler));
  return sched->capabilities();
}

Result<std::vector<std::string>> Runner::ScheduleArray(const std::vector<schedulers::DryRunInfo>& tasks,
                                                       int max_parallel) {
  if (tasks.empty()) return InvalidArgumentError("an array job needs at least one task");
  const std::string& scheduler = tasks.front().scheduler;
  for (size_t i = 1; i < tasks.size(); ++i) {
    if (tasks[i].scheduler != scheduler) {
      return InvalidArgumentError(
          fmt::format("task {} is for scheduler {}, task 0 for {}: an array is on one scheduler", i, tasks[i].scheduler,
                      scheduler));
    }
  }
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(scheduler));
  TORCHX_RETURN_IF_ERROR(Require(*sched, schedulers::Capability::kNativeArrays));
  TORCHX_ASSIGN_OR_RETURN(std::vector<std::string> ids, sched->ScheduleArray(tasks, max_parallel));
  for (std::string& id : ids) id = specs::MakeAppHandle(scheduler, options_.session_name, id);
  return ids;
}

Result<specs::Cfg> Runner::DependencyCfg(const std::string& scheduler, const std::vector<std::string>& after_handles,
                                         specs::Cfg cfg) {
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(scheduler));
  TORCHX_RETURN_IF_ERROR(Require(*sched, schedulers::Capability::kNativeDependencies));
  std::vector<std::string> ids;
  for (const std::string& h : after_handles) {
    TORCHX_ASSIGN_OR_RETURN(auto parsed, specs::ParseAppHandle(h));
    if (parsed.scheduler_backend != scheduler) {
      return InvalidArgumentError(
          fmt::format("dependency {} is on scheduler {}, not {}: only apps of the same "
                      "scheduler can be waited for natively",
                      h, parsed.scheduler_backend, scheduler));
    }
    ids.push_back(parsed.app_id);
  }
  return sched->DependencyCfg(ids, std::move(cfg));
}

Result<std::optional<std::string>> Runner::FindSubmission(const std::string& scheduler, const std::string& key) {
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(scheduler));
  if (!sched->capabilities().Has(schedulers::Capability::kFindsSubmission)) {
    return UnimplementedError(fmt::format("scheduler {} cannot find a submission by its key", scheduler));
  }
  TORCHX_ASSIGN_OR_RETURN(auto id, sched->FindSubmission(key));
  if (!id) return std::optional<std::string>();
  return std::optional(specs::MakeAppHandle(scheduler, options_.session_name, *id));
}

Result<double> Runner::FindableForSeconds(const std::string& scheduler) {
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(scheduler));
  if (!sched->capabilities().Has(schedulers::Capability::kFindsSubmission)) return 0.0;
  return sched->FindableForSeconds();
}

Result<std::optional<schedulers::FailureReport>> Runner::ClassifyFailure(const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(auto sa, SchedulerFor(handle));
  if (sa.first->capabilities().Has(schedulers::Capability::kFailureClassification)) {
    return sa.first->ClassifyFailure(sa.second);
  }
  TORCHX_ASSIGN_OR_RETURN(auto status, Status(handle));
  if (!status) return std::optional<schedulers::FailureReport>();
  if (status->state == specs::AppState::kCancelled) {
    return std::optional(schedulers::FailureReport{schedulers::FailureCause::kCancelled, status->msg});
  }
  if (status->state != specs::AppState::kFailed) {
    return FailedPreconditionError(fmt::format("{} is {}: only a failed or cancelled app has a failure cause", handle,
                                               specs::AppStateName(status->state)));
  }
  return std::optional(schedulers::FailureReport{schedulers::FailureCause::kUnknown, status->msg});
}

Result<specs::Cfg> Runner::RecoveryHandoverCfg(const std::string& scheduler, specs::Cfg cfg) {
  TORCHX_ASSIGN_OR_RETURN(schedulers::Scheduler * sched, GetScheduler(scheduler));
  return sched->RecoveryHandoverCfg(std::move(cfg));
}

std::string Runner::DefaultScheduler() const {
  return options_.schedulers ? plugins::DefaultSchedulerName() : registry_.DefaultScheduler();
}

std::vector<std::string> Runner::SchedulerBackends() const {
  if (!options_.schedulers) return registry_.Names(plugins::PluginType::kScheduler);
  std::vector<std::string> names;
  for (const auto& [name, factory] : *options_.schedulers) names.push_back(name);
  return names;
}

}  // namespace torchx::runner
