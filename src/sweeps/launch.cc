// Planning a sweep (every trial built and dry-run before anything is submitted) and starting it.
#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "composite/children.h"
#include "composite/driver_process.h"
#include "core/spelling.h"
#include "core/state_dir.h"
#include "sweeps/engine.h"
#include "sweeps/sweep_store.h"
#include "torchx/config/run_cfg.h"
#include "torchx/config/tracking.h"
#include "torchx/managed/managed.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/app_id.h"
#include "torchx/specs/serialize.h"
#include "torchx/sweeps/sweep.h"

namespace torchx::sweeps {
namespace {

namespace fs = std::filesystem;

// Every text of the template a placeholder may sit in, each with where it is.
std::vector<std::pair<std::string, std::string>> TemplateTexts(const SweepSpec& spec) {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < spec.args.size(); ++i) out.emplace_back(spec.args[i], fmt::format("args[{}]", i));
  if (spec.app) {
    for (const specs::Role& role : spec.app->roles) {
      std::string at = "app.roles." + role.name;
      out.emplace_back(role.entrypoint, at + ".entrypoint");
      for (size_t i = 0; i < role.args.size(); ++i) out.emplace_back(role.args[i], fmt::format("{}.args[{}]", at, i));
      for (const auto& [k, v] : role.env) out.emplace_back(v, fmt::format("{}.env.{}", at, k));
    }
  }
  return out;
}

// Each swept name is a placeholder or one of the component's parameters; each placeholder names
// a swept parameter.
Status CheckNames(runner::Runner& runner, const SweepSpec& spec) {
  std::set<std::string> placeholders;
  std::vector<std::string> swept;
  for (const ParamSpec& p : spec.space.params) swept.push_back(p.name);
  for (const auto& [text, where] : TemplateTexts(spec)) {
    TORCHX_ASSIGN_OR_RETURN(auto names, Placeholders(text, where));
    for (const std::string& n : names) {
      if (std::find(swept.begin(), swept.end(), n) == swept.end()) {
        return InvalidArgumentError(
            fmt::format("{}: placeholder `@{{{}}}` names no swept parameter; space.parameters: "
                        "{}.{} (`@@{{` is a literal `@{{`)",
                        where, n, fmt::join(swept, ", "), internal::SuggestionSuffix(n, swept)));
      }
      placeholders.insert(n);
    }
  }
  std::vector<std::string> params;
  if (!spec.component.empty()) {
    auto component = runner.Component(spec.component);
    if (!component) return component.error().WithContext("component");
    for (const auto& p : (*component)->spec().params) params.push_back(p.name);
  }
  for (const std::string& n : swept) {
    if (placeholders.count(n)) continue;
    std::string where = "space.parameters." + n;
    if (spec.component.empty()) {
      return InvalidArgumentError(fmt::format("{}: no `@{{{}}}` in the app's entrypoint, args or env", where, n));
    }
    if (std::find(params.begin(), params.end(), n) == params.end()) {
      return InvalidArgumentError(fmt::format(
          "{}: `{}` is neither a parameter of component {} (its parameters: {}) nor a placeholder `@{{{}}}` in "
          "args.{}",
          where, n, spec.component, fmt::join(params, ", "), n, internal::SuggestionSuffix(n, params)));
    }
    for (const std::string& a : spec.args) {
      if (a == "--" + n || a.rfind("--" + n + "=", 0) == 0) {
        return InvalidArgumentError(
            fmt::format("{}: `{}` is swept and also given in args ({}); give it once", where, n, a));
      }
    }
  }
  return OkStatus();
}

std::string TrialLabel(const TrialRecord& t) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : t.values) parts.push_back(k + "=" + ValueText(v));
  return fmt::format("trial {} ({})", t.index, fmt::join(parts, ", "));
}

}  // namespace

Result<Plan> PlanSweep(runner::Runner& runner, const config::TorchxConfig& config, const RunRequest& request) {
  const SweepSpec& spec = request.spec;
  if (TrialCount(spec.space) > kMaxTrials) {  // the file's reader checks too; the inline form comes here
    return InvalidArgumentError(
        fmt::format("space: {} trials; a sweep runs at most {}", TrialCount(spec.space), kMaxTrials));
  }
  Plan plan;
  std::string base = !spec.component.empty() ? fs::path(spec.component).stem().string() : "sweep";
  plan.name = !spec.name.empty() ? spec.name : base + "-sweep";
  plan.id = specs::MakeUnique(specs::NormalizeName(plan.name, 40));
  plan.session = runner.session_name();
  plan.scheduler = !request.scheduler.empty() ? request.scheduler
                   : !spec.scheduler.empty()  ? spec.scheduler
                                              : runner.DefaultScheduler();
  plan.handle = specs::MakeAppHandle(std::string(kSchedulerName), plan.session, plan.id);
  auto caps = runner.SchedulerCapabilities(plan.scheduler);
  if (!caps) return caps.error().WithContext("scheduler");
  if (caps->Has(schedulers::Capability::kComposite)) {
    return InvalidArgumentError(
        fmt::format("scheduler: trials run on a job scheduler, not the composite `{}`", plan.scheduler));
  }
  TORCHX_ASSIGN_OR_RETURN(specs::RunOpts opts, runner.SchedulerRunOpts(plan.scheduler));
  using Form = config::CfgSource::Form;
  std::vector<config::CfgSource> sources = {{Form::kString, request.cfg, "-cfg"},
                                            {Form::kJsonObject, spec.cfg_json, "cfg"}};
  TORCHX_ASSIGN_OR_RETURN(
      specs::Cfg cfg, config::ResolveRunCfg(plan.scheduler, opts, sources, config, config::UnknownOptions::kRefuse));
  TORCHX_RETURN_IF_ERROR(CheckNames(runner, spec));

  SweepRecord r;
  r.id = plan.id;
  r.name = plan.name;
  r.session = plan.session;
  r.scheduler = plan.scheduler;
  r.cfg_json = specs::CfgToJson(cfg);
  r.component = spec.component;
  r.args = spec.args;
  if (spec.app) r.app_json = specs::AppDefToJson(*spec.app, -1);
  if (!spec.component.empty()) r.component_defaults = config.ComponentDefaults(spec.component);
  r.trackers = config::ConfiguredTrackers(config);
  r.space = spec.space;
  r.max_parallel = request.max_parallel.value_or(spec.max_parallel);
  r.max_failures = request.max_failures.value_or(spec.max_failures);
  r.objective = spec.objective;
  r.results_dir = (fs::path(SweepsDir(internal::DefaultStateDir())) / (plan.id + ".results")).string();
  plan.max_parallel = r.max_parallel;
  std::optional<managed::ChildPolicy> policy;
  if (const std::string& managed_json = spec.managed_json; !managed_json.empty()) {
    // Resolved now (the failover targets' options against this .torchxconfig): the driver builds
    // each trial's managed job from the record, in another process.
    TORCHX_ASSIGN_OR_RETURN(managed::ChildPolicy given, managed::ParseChildPolicy(managed_json, "managed"));
    auto resolved = managed::ResolveChildPolicy(runner, config, std::move(given));
    if (!resolved) return resolved.error().WithContext("managed");
    policy = std::move(*resolved);
    r.managed_json = managed::ChildPolicyToJson(*policy);
    plan.managed = true;
  }
  // A managed trial's request: its managed job with every target's.
  auto trial_request = [&](const schedulers::DryRunInfo& info, const TrialRecord& t) -> Result<std::string> {
    if (!policy) return info.request;
    TORCHX_ASSIGN_OR_RETURN(auto managed_info,
                            managed::PlanManagedChild(runner, config, *policy, info.app, plan.scheduler, cfg, plan.id,
                                                      std::to_string(t.index)));
    return managed_info.request;
  };

  std::vector<Assignment> trials = Trials(spec.space);
  if (spec.space.type == SpaceType::kAx) {
    // Ax proposes the values as the sweep runs: the trials wait without them, and one trial built
    // from a sample of the space (each range's middle, each choice's first) checks the template.
    TrialRecord sample;
    for (const ParamSpec& p : spec.space.params) {
      Value v = p.kind == ParamSpec::Kind::kValues       ? p.values.front()
                : p.kind == ParamSpec::Kind::kRandInt    ? Value(static_cast<std::int64_t>((p.low + p.high) / 2))
                : p.kind == ParamSpec::Kind::kLogUniform ? Value(std::sqrt(p.low * p.high))
                                                         : Value((p.low + p.high) / 2);
      sample.values.emplace_back(p.name, std::move(v));
    }
    auto app = BuildTrialApp(runner, r, sample);
    if (!app) return app.error().WithContext("a trial of the space's middle");
    TORCHX_ASSIGN_OR_RETURN(specs::ResolvedCfg checked, runner.ResolveCfg(plan.scheduler, cfg));
    auto info = runner.DryRun(std::move(*app), plan.scheduler, checked, {}, TrialTracking(r));
    if (!info) return info.error().WithContext("a trial of the space's middle");
    auto request_text = trial_request(*info, sample);
    if (!request_text) return request_text.error().WithContext("a trial of the space's middle");
    plan.first_request = std::move(*request_text);
    for (int i = 0; i < spec.space.trials; ++i) {
      TrialRecord t;
      t.index = i;
      r.trials.push_back(std::move(t));
      plan.trials.push_back({i, {}});
    }
    plan.record_json = SweepCodec::ToJson(r);
    return plan;
  }
  if (trials.empty()) return InvalidArgumentError("space: gives no trials");
  TORCHX_ASSIGN_OR_RETURN(specs::ResolvedCfg resolved, runner.ResolveCfg(plan.scheduler, cfg));
  specs::Tracking tracking = TrialTracking(r);
  // One array job when the scheduler has them and every trial is one replica (an array task is
  // one job of one node).
  // A managed trial is not an array task: a recovery is a new job the array cannot hold.
  bool array = caps->Has(schedulers::Capability::kNativeArrays) && !policy;
  r.trials.reserve(trials.size());
  for (size_t i = 0; i < trials.size(); ++i) {
    TrialRecord t;
    t.index = static_cast<int>(i);
    t.values = std::move(trials[i]);
    auto app = BuildTrialApp(runner, r, t);
    if (!app) return app.error().WithContext(TrialLabel(t));
    array = array && app->roles.size() == 1 && app->roles[0].num_replicas == 1;
    auto info = runner.DryRun(std::move(*app), plan.scheduler, resolved, {}, tracking);
    if (!info) return info.error().WithContext(TrialLabel(t));
    if (i == 0) {
      auto request_text = trial_request(*info, t);
      if (!request_text) return request_text.error().WithContext(TrialLabel(t));
      plan.first_request = std::move(*request_text);
    }
    if (array) plan.array_tasks.push_back(std::move(*info));
    plan.trials.push_back({t.index, t.values});
    r.trials.push_back(std::move(t));
  }
  if (!array) plan.array_tasks.clear();
  plan.record_json = SweepCodec::ToJson(r);
  return plan;
}

std::string RenderPlan(const Plan& plan) {
  std::string out = fmt::format(
      "=== SWEEP {} on {}: {}{} trials, {}{} ===\n", plan.name, plan.scheduler, plan.trials.size(),
      plan.managed ? " managed" : "",
      plan.max_parallel > 0 ? fmt::format("at most {} at a time", plan.max_parallel) : std::string("all at once"),
      plan.array_tasks.empty() ? "" : ", as one array job (each trial a task)");
  for (const PlannedTrial& t : plan.trials) {
    if (t.values.empty()) {
      out += fmt::format("trial {}: proposed by Ax as the sweep runs\n", t.index);
      continue;
    }
    std::vector<std::string> parts;
    for (const auto& [k, v] : t.values) parts.push_back(k + "=" + ValueText(v));
    out += fmt::format("trial {}: {}\n", t.index, fmt::join(parts, " "));
  }
  out += fmt::format("\n=== TRIAL 0{} ===\n{}\n",
                     !plan.trials.empty() && plan.trials[0].values.empty() ? " (values: the space's middle)" : "",
                     plan.first_request);
  return out;
}

Result<std::string> LaunchSweep(runner::Runner& runner, const Plan& plan) {
  TORCHX_ASSIGN_OR_RETURN(SweepRecord r, SweepCodec::FromJson(plan.record_json));
  std::error_code ec;
  r.cwd = fs::current_path(ec).string();
  r.created = composite::EpochNow();
  std::string state_dir = internal::DefaultStateDir();
  SweepStore store(SweepsDir(state_dir));
  TORCHX_RETURN_IF_ERROR(store.EnsureDir());
  // The trials' tracker: TorchX's fsspec tracker on the local file system, rooted in the sweep's
  // results directory (its config is a `key=value` file, as that tracker reads it).
  if (!fs::create_directories(r.results_dir, ec) && ec) {
    return UnavailableError(fmt::format("sweep: cannot create {}: {}", r.results_dir, ec.message()));
  }
  ::chmod(r.results_dir.c_str(), 0700);
  {
    std::ofstream conf(TrackerConfigPath(r), std::ios::trunc);
    conf << "protocol=file\nroot_path=" << r.results_dir << "\n";
    if (!conf) return UnavailableError(fmt::format("sweep: cannot write {}", TrackerConfigPath(r)));
  }
  auto cleanup = [&] {
    (void)store.Remove(r.id);
    fs::remove_all(r.results_dir, ec);
    fs::remove(TrackerConfigPath(r), ec);
    fs::remove(AxStatePath(r), ec);
  };
  // An array is submitted by this process, which holds the sweep's driver lock from before the
  // record exists until the handles are recorded: a status or list call meanwhile finds it held
  // and starts no driver (one would fail the trials being submitted as unrecorded).
  std::optional<composite::DriverLock> lock;
  if (!plan.array_tasks.empty()) {
    for (size_t i = 0; i < r.trials.size(); ++i) r.trials.Mut(i).phase = ChildPhase::kSubmitting;
    auto taken = composite::DriverLock::TryTake(store.dir(), r.id);
    if (!taken || !*taken) return UnavailableError(fmt::format("sweep {}: another process holds its lock", r.id));
    lock.emplace(std::move(**taken));
  }
  if (Status s = store.Create(r); !s.ok()) {
    cleanup();
    return s;
  }
  if (!plan.array_tasks.empty()) {
    // Every trial at once; the scheduler keeps at most max_parallel running. The driver, started
    // after, follows them. (Were the launcher killed now, the driver would find the trials
    // claimed and unrecorded, and fail them rather than submit them twice.)
    auto handles = runner.ScheduleArray(plan.array_tasks, r.max_parallel);
    bool fallback = !handles && handles.error().code() == StatusCode::kInvalidArgument;
    if (!handles && !fallback) {
      cleanup();
      return handles.error();
    }
    double now = composite::EpochNow();
    auto recorded = store.Update(r.id, [&](SweepRecord& cur) {
      for (size_t i = 0; i < cur.trials.size(); ++i) {
        TrialRecord& t = cur.trials.Mut(i);
        if (fallback) {  // the trials cannot be one array (other resources): the driver submits them
          t.phase = ChildPhase::kWaiting;
          continue;
        }
        t.phase = ChildPhase::kSubmitted;
        t.handle = (*handles)[t.index];
        t.state = specs::AppState::kSubmitted;
        t.submitted = now;
      }
      if (!fallback) cur.array_job = handles->front().substr(0, handles->front().rfind('_'));
      return OkStatus();
    });
    if (!recorded) {
      if (handles) {
        for (const std::string& h : *handles) (void)runner.Cancel(h);
      }
      cleanup();
      return recorded.error();
    }
  }
  lock.reset();  // the driver takes it
  if (Status s = composite::StartDriver(state_dir, store.dir(), r.id, r.cwd, "sweep"); !s.ok()) {
    if (!plan.array_tasks.empty()) return plan.handle;  // submitted: a status call starts the driver again
    cleanup();
    return s;
  }
  return plan.handle;
}

Result<composite::PlannedComposite> PlanLaunch(runner::Runner& runner, const config::TorchxConfig& config,
                                               const composite::LaunchRequest& request) {
  // The limits the edge gives (`--max_parallel 0`: no limit) override the file's as numbers: a
  // file's own must be 1 or more, so they are not written into it.
  composite::LaunchRequest file = request;
  nlohmann::json overrides =
      nlohmann::json::parse(request.overrides_json.empty() ? "{}" : request.overrides_json, nullptr, false);
  if (!overrides.is_object()) return InvalidArgumentError("sweep: the overrides must be a JSON object");
  std::optional<int> limits[2];
  const char* names[2] = {"max_parallel", "max_failures"};
  for (int k = 0; k < 2; ++k) {
    if (!overrides.contains(names[k])) continue;
    const nlohmann::json& v = overrides[names[k]];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 1'000'000) {
      return InvalidArgumentError(
          fmt::format("{}: must be a whole number from 0 (no limit) to 1000000, got {}", names[k], v.dump()));
    }
    limits[k] = v.get<int>();
    overrides.erase(names[k]);
  }
  file.overrides_json = overrides.dump();
  TORCHX_ASSIGN_OR_RETURN(SweepSpec spec, composite::ParseDocument(file, &ParseSweep));
  RunRequest run{std::move(spec), request.scheduler, request.cfg, limits[0], limits[1]};
  TORCHX_ASSIGN_OR_RETURN(Plan plan, PlanSweep(runner, config, run));
  std::string text = RenderPlan(plan), scheduler = plan.scheduler;
  return composite::PlannedFrom(std::move(plan), std::move(text), {scheduler}, &LaunchSweep);
}

}  // namespace torchx::sweeps
