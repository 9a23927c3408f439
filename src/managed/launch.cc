// Launching a managed run: targets and the recovery policy read from the edge (CLI, Python), every
// target's options resolved and its first attempt dry-run before anything is recorded, then the
// record and its driver.
#include <sys/stat.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "composite/children.h"
#include "composite/driver_process.h"
#include "core/state_dir.h"
#include "core/strings.h"
#include "managed/policy.h"
#include "managed/record.h"
#include "specs/yaml_reader.h"
#include "torchx/config/run_cfg.h"
#include "torchx/managed/managed.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/app_id.h"
#include "torchx/specs/serialize.h"

namespace torchx::managed {
namespace {

namespace fs = std::filesystem;
using schedulers::FailureCause;

// A JSON object of options as `k=v,k2=v2`, for a target's label.
std::string CfgText(const std::string& cfg_json) {
  nlohmann::json j = nlohmann::json::parse(cfg_json, nullptr, false);
  if (!j.is_object()) return cfg_json;
  std::string out;
  for (const auto& [k, v] : j.items()) {
    out += fmt::format("{}{}={}", out.empty() ? "" : ",", k, v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out;
}

}  // namespace

std::set<FailureCause> DefaultRecoverOn() {
  return {FailureCause::kNodeFailure, FailureCause::kPreemption, FailureCause::kEviction, FailureCause::kEngineLost,
          FailureCause::kSupervisorLost};
}

Result<Target> ParseTarget(std::string_view text) {
  size_t colon = text.find(':');
  Target t;
  t.scheduler = std::string(text.substr(0, colon));
  if (colon != std::string_view::npos) t.cfg = std::string(text.substr(colon + 1));
  if (t.scheduler.empty()) {
    return InvalidArgumentError(
        fmt::format("--failover `{}`: give a scheduler, then its options if any: SCHEDULER[:k=v,k2=v2] (e.g. "
                    "slurm:partition=gpu-b,qos=high)",
                    text));
  }
  return t;
}

Result<double> ParseDuration(std::string_view text, std::string_view what) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view unit(end, text.data() + text.size() - end);
  double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : unit == "d" ? 86400 : -1;
  if (ec != std::errc() || end == text.data() || scale < 0 || !std::isfinite(value) || value <= 0) {
    return InvalidArgumentError(fmt::format(
        "{}: `{}` is not a duration; give a positive number of seconds, or one with a unit: 90, 90s, 15m, 2h, 1d", what,
        text));
  }
  return value * scale;
}

Result<Policy> PolicyWith(int max_recoveries, const std::vector<std::string>& recover_on,
                          std::optional<std::string> start_timeout, std::string_view field_prefix) {
  auto field = [field_prefix](std::string_view name) { return fmt::format("{}{}", field_prefix, name); };
  Policy p;
  if (max_recoveries < 0) {
    return InvalidArgumentError(
        fmt::format("{}: {} is negative; give 0 or more", field("max_recoveries"), max_recoveries));
  }
  p.max_recoveries = max_recoveries;
  for (const std::string& list : recover_on) {
    for (const std::string& name : internal::SplitAny(list, ",")) {
      if (name.empty()) continue;
      TORCHX_ASSIGN_OR_RETURN(FailureCause c, schedulers::ParseFailureCause(name, field("recover_on")));
      if (c == FailureCause::kCancelled) {
        return InvalidArgumentError(fmt::format(
            "{}: `cancelled` cannot be recovered: a cancel (scancel, docker kill, torchx cancel) is a person's "
            "decision and ends the run",
            field("recover_on")));
      }
      p.recover_on.insert(c);
    }
  }
  if (start_timeout) {
    TORCHX_ASSIGN_OR_RETURN(double s, ParseDuration(*start_timeout, field("start_timeout")));
    p.start_timeout = s;
  }
  return p;
}

Result<Plan> PlanManaged(runner::Runner& runner, const config::TorchxConfig& config, const LaunchRequest& request) {
  if (!request.workspace.empty()) {
    return InvalidArgumentError(
        "--workspace: a managed run cannot take a workspace yet (each target would need its own build); build "
        "the image first, or run without --managed");
  }
  if (request.targets.empty()) return InvalidArgumentError("managed: give at least one scheduler to run on");
  Plan plan;
  ManagedRecord r;
  r.name = request.app.name.empty() ? "managed" : request.app.name;
  r.id = specs::MakeUnique(specs::NormalizeName(r.name, 40));
  r.session = runner.session_name();
  std::error_code ec;
  r.cwd = fs::current_path(ec).string();
  r.app_json = specs::AppDefToJson(request.app, -1);
  r.max_recoveries = request.policy.max_recoveries;
  for (FailureCause c : request.policy.recover_on) r.recover_on.emplace_back(schedulers::FailureCauseName(c));
  r.start_timeout = request.policy.start_timeout;
  r.checkpoint_dir = !request.checkpoint_dir.empty()
                         ? fs::absolute(request.checkpoint_dir, ec).lexically_normal().string()
                         : (fs::path(r.cwd) / ".torchx" / "checkpoints" / r.id).string();
  plan.id = r.id;
  plan.handle = specs::MakeAppHandle(std::string(kSchedulerName), r.session, r.id);
  for (size_t i = 0; i < request.targets.size(); ++i) {
    const Target& t = request.targets[i];
    std::string where = i == 0 ? std::string("scheduler") : fmt::format("--failover {}", t.scheduler);
    auto caps = runner.SchedulerCapabilities(t.scheduler);
    if (!caps) return caps.error().WithContext(where);
    if (caps->Has(schedulers::Capability::kComposite)) {
      return InvalidArgumentError(
          fmt::format("{}: a managed run goes to a job scheduler, not the composite `{}`", where, t.scheduler));
    }
    TORCHX_ASSIGN_OR_RETURN(specs::RunOpts opts, runner.SchedulerRunOpts(t.scheduler));
    using Form = config::CfgSource::Form;
    config::CfgSource given = t.cfg_json.empty() ? config::CfgSource{Form::kString, t.cfg, i == 0 ? "-cfg" : where}
                                                 : config::CfgSource{Form::kJsonObject, t.cfg_json, where};
    auto cfg = config::ResolveRunCfg(t.scheduler, opts, {given}, config, config::UnknownOptions::kRefuse);
    if (!cfg) return cfg.error().WithContext(where);
    auto handed = runner.RecoveryHandoverCfg(t.scheduler, std::move(*cfg));
    if (!handed) return handed.error().WithContext(where);
    std::string given_text = t.cfg_json.empty() ? t.cfg : CfgText(t.cfg_json);
    TargetRecord tr{t.scheduler, specs::CfgToJson(*handed),
                    given_text.empty() ? t.scheduler : fmt::format("{} ({})", t.scheduler, given_text)};
    r.targets.push_back(tr);
    TORCHX_ASSIGN_OR_RETURN(specs::AppDef app, AttemptApp(r, 0));
    auto info = runner.DryRun(std::move(app), t.scheduler, *handed);
    if (!info) return info.error().WithContext(where);
    plan.dry_runs.push_back(std::move(*info));
  }
  plan.record_json = ManagedCodec::ToJson(r);
  return plan;
}

std::string RenderPlan(const Plan& plan) {
  auto r = ManagedCodec::FromJson(plan.record_json);
  if (!r) return r.error().message();
  std::string out = fmt::format(
      "=== MANAGED {}: up to {} recover{} per target on {}{}; checkpoints in {} ===\n", plan.handle, r->max_recoveries,
      r->max_recoveries == 1 ? "y" : "ies", fmt::join(r->recover_on, ", "),
      r->start_timeout ? fmt::format("; the next target after {} s waiting to start", *r->start_timeout) : "",
      r->checkpoint_dir);
  for (size_t i = 0; i < plan.dry_runs.size() && i < r->targets.size(); ++i) {
    out += fmt::format("\n=== TARGET {}: {} ===\n{}\n", i, r->targets[i].label, plan.dry_runs[i].request);
  }
  return out;
}

Result<std::string> StartManaged(const std::string& state_dir, ManagedRecord r) {
  r.created = composite::EpochNow();
  std::error_code ec;
  bool made = !fs::exists(r.checkpoint_dir, ec);
  if (!fs::create_directories(r.checkpoint_dir, ec) && ec) {
    return UnavailableError(fmt::format("--checkpoint_dir: cannot create {}: {}", r.checkpoint_dir, ec.message()));
  }
  auto undo = [&] {  // nothing left behind: the directory this launch made, while still empty
    if (made) fs::remove(r.checkpoint_dir, ec);
  };
  ManagedStore store(ManagedDir(state_dir));
  Status created = store.EnsureDir();
  if (created.ok()) created = store.Create(r);
  if (!created.ok()) {
    undo();
    return created;
  }
  if (Status s = composite::StartDriver(state_dir, store.dir(), r.id, r.cwd, "managed"); !s.ok()) {
    (void)store.Remove(r.id);
    undo();
    return s;
  }
  return r.id;
}

Result<std::string> LaunchManaged(const Plan& plan) {
  TORCHX_ASSIGN_OR_RETURN(ManagedRecord r, ManagedCodec::FromJson(plan.record_json));
  TORCHX_RETURN_IF_ERROR(StartManaged(internal::DefaultStateDir(), std::move(r)).status());
  return plan.handle;
}

Result<composite::PlannedComposite> PlanLaunch(runner::Runner& runner, const config::TorchxConfig& config,
                                               const composite::LaunchRequest& request) {
  using Json = nlohmann::ordered_json;
  TORCHX_ASSIGN_OR_RETURN(std::string document, composite::DocumentOf(request));
  TORCHX_ASSIGN_OR_RETURN(Json doc, specs::internal::YamlMappingFromText(
                                        document, request.origin, "with `app` and the keys of a `managed:` block"));
  if (!doc.contains("app") || !doc["app"].is_object()) {
    return InvalidArgumentError(fmt::format("{}: app: required (the AppDef to run, as JSON)", request.origin));
  }
  LaunchRequest launch;
  TORCHX_ASSIGN_OR_RETURN(launch.app, specs::AppDefFromJson(doc["app"].dump(), runner.build_context().named_resources));
  if (doc.contains("name")) {  // `--name`: the run's name, else its app's
    if (!doc["name"].is_string() || doc["name"].get<std::string>().empty()) {
      return InvalidArgumentError(fmt::format("{}: name: must be a non-empty string", request.origin));
    }
    launch.app.name = doc["name"].get<std::string>();
  }
  Target first{request.scheduler, request.cfg, ""};
  if (doc.contains("cfg") && !doc["cfg"].is_null()) {
    if (!doc["cfg"].is_object()) return InvalidArgumentError(fmt::format("{}: cfg: must be a mapping", request.origin));
    if (!request.cfg.empty() && !doc["cfg"].empty()) {  // one of them would be dropped
      return InvalidArgumentError(
          fmt::format("{}: cfg: give the first target's options in the file or with -cfg, not both", request.origin));
    }
    first.cfg_json = doc["cfg"].dump();
  }
  doc.erase("app");
  doc.erase("cfg");
  doc.erase("name");
  TORCHX_ASSIGN_OR_RETURN(ChildPolicy policy, ParseChildPolicy(doc.dump(), request.origin));
  launch.targets.push_back(std::move(first));
  for (Target& t : policy.failover) launch.targets.push_back(std::move(t));
  launch.policy = std::move(policy.policy);
  launch.checkpoint_dir = std::move(policy.checkpoint_dir);
  TORCHX_ASSIGN_OR_RETURN(Plan plan, PlanManaged(runner, config, launch));
  std::vector<std::string> where;
  for (const schedulers::DryRunInfo& target : plan.dry_runs) where.push_back(target.scheduler);
  std::string text = RenderPlan(plan);
  auto start = [](runner::Runner&, const Plan& p) { return LaunchManaged(p); };
  return composite::PlannedFrom<Plan>(std::move(plan), std::move(text), std::move(where), +start);
}

}  // namespace torchx::managed
