// A composite's child run as a managed job: the `managed:` block of a pipeline step or a sweep
// (the keys of `run --managed`), resolved at launch, and the dry run the composite submits for
// each child through its Runner: scheduler `managed`, the run's record as the payload.
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/spelling.h"
#include "managed/record.h"
#include "torchx/config/run_cfg.h"
#include "torchx/managed/managed.h"
#include "torchx/specs/serialize.h"

namespace torchx::managed {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

const std::vector<std::string> kKeys = {"max_recoveries", "recover_on", "failover", "start_timeout", "checkpoint_dir"};

// A list of cause names, or one comma-separated string (PolicyWith splits them).
Result<std::vector<std::string>> CauseNames(const Json& v, const std::string& where) {
  std::vector<std::string> out;
  if (v.is_string()) {
    out.push_back(v.get<std::string>());
  } else if (v.is_array()) {
    for (const Json& x : v) {
      if (!x.is_string()) return InvalidArgumentError(fmt::format("{}: each cause must be a string", where));
      out.push_back(x.get<std::string>());
    }
  } else if (!v.is_null()) {
    return InvalidArgumentError(fmt::format("{}: give a list of causes (or one comma-separated string)", where));
  }
  return out;
}

Result<Target> TargetOf(const Json& v, const std::string& where) {
  if (v.is_string()) {
    auto t = ParseTarget(v.get<std::string>());
    if (!t) return t.error().WithContext(where);
    return t;
  }
  if (v.is_object() && v.contains("scheduler") && v["scheduler"].is_string() &&
      !v["scheduler"].get<std::string>().empty()) {
    for (const auto& [k, _] : v.items()) {
      if (k != "scheduler" && k != "cfg") {
        return InvalidArgumentError(fmt::format("{}: unknown field `{}`; valid fields: scheduler, cfg", where, k));
      }
    }
    Target t;
    t.scheduler = v["scheduler"].get<std::string>();
    if (v.contains("cfg") && !v["cfg"].is_null()) {
      if (!v["cfg"].is_object())
        return InvalidArgumentError(fmt::format("{}.cfg: must be a mapping of options", where));
      t.cfg_json = v["cfg"].dump();
    }
    return t;
  }
  return InvalidArgumentError(
      fmt::format("{}: give `SCHEDULER[:k=v,...]` or a mapping with `scheduler` (and `cfg`)", where));
}

}  // namespace

Result<ChildPolicy> ParseChildPolicy(std::string_view json_text, const std::string& where) {
  Json j = Json::parse(json_text, nullptr, false);
  if (j.is_null()) j = Json::object();  // `managed:` with nothing under it: the defaults
  if (!j.is_object()) {
    return InvalidArgumentError(fmt::format("{}: must be a mapping with any of: {}", where, fmt::join(kKeys, ", ")));
  }
  for (const auto& [key, _] : j.items()) {
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      return InvalidArgumentError(fmt::format("{}: unknown field `{}`; valid fields: {}.{}", where, key,
                                              fmt::join(kKeys, ", "), internal::SuggestionSuffix(key, kKeys)));
    }
  }
  int max_recoveries = 3;
  if (j.contains("max_recoveries") && !j["max_recoveries"].is_null()) {
    const Json& v = j["max_recoveries"];
    if (!v.is_number_integer()) {
      return InvalidArgumentError(fmt::format("{}.max_recoveries: must be a whole number, 0 or more", where));
    }
    max_recoveries = v.get<int>();
  }
  std::vector<std::string> causes;
  if (j.contains("recover_on")) {
    TORCHX_ASSIGN_OR_RETURN(causes, CauseNames(j["recover_on"], where + ".recover_on"));
  }
  std::optional<std::string> start_timeout;
  if (j.contains("start_timeout") && !j["start_timeout"].is_null()) {
    const Json& v = j["start_timeout"];
    if (v.is_number()) {
      start_timeout = fmt::format("{}", v.get<double>());
    } else if (v.is_string()) {
      start_timeout = v.get<std::string>();
    } else {
      return InvalidArgumentError(fmt::format("{}.start_timeout: give seconds, or a duration: 90s, 15m, 2h", where));
    }
  }
  auto policy = PolicyWith(max_recoveries, causes, start_timeout, where + ".");
  if (!policy) return policy.error();
  ChildPolicy out;
  out.policy = std::move(*policy);
  if (j.contains("failover") && !j["failover"].is_null()) {
    const Json& f = j["failover"];
    if (!f.is_array()) {  // one target
      TORCHX_ASSIGN_OR_RETURN(Target t, TargetOf(f, where + ".failover"));
      out.failover.push_back(std::move(t));
    }
    for (size_t i = 0; f.is_array() && i < f.size(); ++i) {
      TORCHX_ASSIGN_OR_RETURN(Target t, TargetOf(f[i], fmt::format("{}.failover[{}]", where, i)));
      out.failover.push_back(std::move(t));
    }
  }
  if (j.contains("checkpoint_dir") && !j["checkpoint_dir"].is_null()) {
    if (!j["checkpoint_dir"].is_string()) {
      return InvalidArgumentError(fmt::format("{}.checkpoint_dir: must be a path", where));
    }
    out.checkpoint_dir = j["checkpoint_dir"].get<std::string>();
  }
  return out;
}

std::string ChildPolicyToJson(const ChildPolicy& p) {
  Json j = Json::object();
  j["max_recoveries"] = p.policy.max_recoveries;
  Json causes = Json::array();
  for (schedulers::FailureCause c : p.policy.recover_on) causes.push_back(schedulers::FailureCauseName(c));
  j["recover_on"] = std::move(causes);
  Json failover = Json::array();
  for (const Target& t : p.failover) {
    if (t.cfg_json.empty()) {
      failover.push_back(t.cfg.empty() ? t.scheduler : t.scheduler + ":" + t.cfg);
    } else {
      failover.push_back({{"scheduler", t.scheduler}, {"cfg", Json::parse(t.cfg_json)}});
    }
  }
  j["failover"] = std::move(failover);
  if (p.policy.start_timeout) j["start_timeout"] = *p.policy.start_timeout;
  if (!p.checkpoint_dir.empty()) j["checkpoint_dir"] = p.checkpoint_dir;
  return j.dump();
}

Result<ChildPolicy> ResolveChildPolicy(runner::Runner& runner, const config::TorchxConfig& config, ChildPolicy p) {
  for (size_t i = 0; i < p.failover.size(); ++i) {
    Target& t = p.failover[i];
    std::string where = fmt::format("failover[{}] ({})", i, t.scheduler);
    auto caps = runner.SchedulerCapabilities(t.scheduler);
    if (!caps) return caps.error().WithContext(where);
    if (caps->Has(schedulers::Capability::kComposite)) {
      return InvalidArgumentError(
          fmt::format("{}: a managed run goes to a job scheduler, not the composite `{}`", where, t.scheduler));
    }
    auto opts = runner.SchedulerRunOpts(t.scheduler);
    if (!opts) return opts.error().WithContext(where);
    using Form = config::CfgSource::Form;
    config::CfgSource given = t.cfg_json.empty() ? config::CfgSource{Form::kString, t.cfg, where}
                                                 : config::CfgSource{Form::kJsonObject, t.cfg_json, where};
    auto cfg = config::ResolveRunCfg(t.scheduler, *opts, {given}, config, config::UnknownOptions::kRefuse);
    if (!cfg) return cfg.error().WithContext(where);
    t.cfg_json = specs::CfgToJson(*cfg);
    t.cfg.clear();
  }
  if (!p.checkpoint_dir.empty()) {
    std::error_code ec;
    p.checkpoint_dir = fs::absolute(p.checkpoint_dir, ec).lexically_normal().string();
  }
  return p;
}

Result<schedulers::DryRunInfo> PlanManagedChild(runner::Runner& runner, const config::TorchxConfig& config,
                                                const ChildPolicy& p, specs::AppDef app, const std::string& scheduler,
                                                const specs::Cfg& cfg, const std::string& composite_id,
                                                const std::string& child) {
  LaunchRequest request;
  request.app = std::move(app);
  request.targets.push_back({scheduler, "", specs::CfgToJson(cfg)});
  for (const Target& t : p.failover) request.targets.push_back(t);
  request.policy = p.policy;
  std::error_code ec;
  fs::path base = !p.checkpoint_dir.empty() ? fs::path(p.checkpoint_dir)
                                            : fs::current_path(ec) / ".torchx" / "checkpoints" / composite_id;
  request.checkpoint_dir = (base / child).string();
  TORCHX_ASSIGN_OR_RETURN(Plan plan, PlanManaged(runner, config, request));
  schedulers::DryRunInfo info;
  info.scheduler = std::string(kSchedulerName);
  info.app = plan.dry_runs.front().app;
  info.app_id = plan.id;
  info.app_id_is_final = true;
  info.request = RenderPlan(plan);
  info.payload = std::move(plan.record_json);
  return info;
}

Result<ChildPolicy> ChildPolicyOfPayload(const std::string& payload) {
  TORCHX_ASSIGN_OR_RETURN(ManagedRecord r, ManagedCodec::FromJson(payload));
  ChildPolicy p;
  p.policy.max_recoveries = r.max_recoveries;
  p.policy.recover_on.clear();
  for (const std::string& name : r.recover_on) {
    TORCHX_ASSIGN_OR_RETURN(schedulers::FailureCause c, schedulers::ParseFailureCause(name, "recover_on"));
    p.policy.recover_on.insert(c);
  }
  p.policy.start_timeout = r.start_timeout;
  for (size_t i = 1; i < r.targets.size(); ++i)
    p.failover.push_back({r.targets[i].scheduler, "", r.targets[i].cfg_json});
  // Each child's is <dir>/<child>. The default (<cwd>/.torchx/checkpoints/<composite id>) is not
  // said: the file run again is a new composite, whose children start from checkpoints of their own.
  fs::path dir = fs::path(r.checkpoint_dir).parent_path();
  if (dir.parent_path() != fs::path(r.cwd) / ".torchx" / "checkpoints") p.checkpoint_dir = dir.string();
  return p;
}

Result<schedulers::DryRunInfo> ManagedChildDryRun(const std::string& payload) {
  TORCHX_ASSIGN_OR_RETURN(ManagedRecord r, ManagedCodec::FromJson(payload));
  schedulers::DryRunInfo info;
  info.scheduler = std::string(kSchedulerName);
  TORCHX_ASSIGN_OR_RETURN(info.app, AttemptApp(r, 0));
  info.app_id = r.id;
  info.app_id_is_final = true;
  info.payload = payload;
  return info;
}

}  // namespace torchx::managed
