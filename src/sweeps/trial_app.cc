// A trial's AppDef from the sweep's template and the trial's values, and the TrialBackend that
// submits it through a Runner and reads what it reported from the tracker files.
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/python_bridge.h"
#include "core/value_json.h"

#include "sweeps/engine.h"
#include "sweeps/metrics.h"
#include "torchx/managed/managed.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/app_id.h"
#include "torchx/specs/serialize.h"

namespace torchx::sweeps {
namespace {

namespace fs = std::filesystem;

bool HasPlaceholder(const std::vector<std::string>& texts, const std::string& name) {
  std::string mark = "@{" + name + "}";
  for (const std::string& t : texts) {
    for (size_t at = t.find(mark); at != std::string::npos; at = t.find(mark, at + 1)) {
      if (at == 0 || t[at - 1] != '@') return true;  // `@@{` is a literal
    }
  }
  return false;
}

class RunnerTrialBackend final : public composite::OverRunner<TrialBackend> {
 public:
  using OverRunner::OverRunner;

  Result<TrialDryRun> Plan(const SweepRecord& sweep, const TrialRecord& trial) override {
    TORCHX_ASSIGN_OR_RETURN(specs::AppDef app, BuildTrialApp(runner(), sweep, trial));
    TORCHX_ASSIGN_OR_RETURN(specs::RunOpts opts, runner().SchedulerRunOpts(sweep.scheduler));
    TORCHX_ASSIGN_OR_RETURN(specs::Cfg cfg, opts.CfgFromJson(sweep.cfg_json));
    TORCHX_ASSIGN_OR_RETURN(specs::ResolvedCfg resolved, runner().ResolveCfg(sweep.scheduler, cfg));
    TrialDryRun out;
    TORCHX_ASSIGN_OR_RETURN(out.info,
                            runner().DryRun(std::move(app), sweep.scheduler, resolved, {}, TrialTracking(sweep)));
    if (!sweep.managed_json.empty()) {
      // The trial as a managed job of its own, its checkpoints in <dir>/<index>; the policy's
      // options were resolved at launch, so no .torchxconfig is read here.
      TORCHX_ASSIGN_OR_RETURN(managed::ChildPolicy policy, managed::ParseChildPolicy(sweep.managed_json, "managed"));
      TORCHX_ASSIGN_OR_RETURN(
          out.info, managed::PlanManagedChild(runner(), config::TorchxConfig(), policy, std::move(out.info.app),
                                              sweep.scheduler, cfg, sweep.id, std::to_string(trial.index)));
    }
    out.planned = composite::PlanClaim(out.info, runner().session_name());
    return out;
  }
  std::vector<Report> Reports(const SweepRecord& sweep, const TrialRecord& trial) override {
    // A composite trial (a managed one) reported from each of its runs in turn.
    std::vector<std::string> runs;
    if (auto members = runner().Members(trial.handle); !members) {
      std::fprintf(stderr, "torchx: trial %d: its runs cannot be listed now: %s\n", trial.index,
                   members.error().message().c_str());
    } else if (*members) {
      for (const schedulers::MemberApp& m : **members) {
        if (!m.app_handle.empty()) runs.push_back(m.app_handle);
      }
    }
    if (runs.empty()) runs.push_back(trial.handle);
    return ReadReports(sweep.results_dir, runs, std::to_string(trial.index));
  }

  // One Python child (torchx.sweeps._ax) for the driver's life: Ax is imported once.
  Result<std::vector<Proposal>> Propose(const SweepRecord& sweep, int count) override {
    using AxJson = nlohmann::json;
    AxJson params = AxJson::array();
    for (const ParamSpec& p : sweep.space.params) {
      AxJson j = {{"name", p.name}};
      if (p.kind == ParamSpec::Kind::kValues) {
        j["type"] = "choice";
        j["values"] = AxJson::array();
        for (const Value& v : p.values) j["values"].push_back(internal::ValueToJson<AxJson>(v));
      } else {
        j["type"] = p.kind == ParamSpec::Kind::kRandInt ? "int" : "float";
        j["low"] = p.low;
        j["high"] = p.high;
        j["log_scale"] = p.kind == ParamSpec::Kind::kLogUniform;
      }
      params.push_back(std::move(j));
    }
    AxJson ended = AxJson::array();
    AxJson valued = AxJson::array();  // Ax's trials the sweep holds: any other Ax proposed is abandoned
    for (const TrialRecord& t : sweep.trials) {
      if (t.ax_index < 0) continue;
      valued.push_back(t.ax_index);
      if (t.phase != ChildPhase::kDone && t.phase != ChildPhase::kSkipped) continue;
      bool ok = t.phase == ChildPhase::kDone && t.state == specs::AppState::kSucceeded && t.objective;
      ended.push_back({{"index", t.ax_index}, {"objective", ok ? AxJson(*t.objective) : AxJson(nullptr)}});
    }
    AxJson request = {{"state", AxStatePath(sweep)},
                      {"name", sweep.id},
                      {"seed", sweep.space.seed},
                      {"parameters", std::move(params)},
                      {"objective", {{"metric", sweep.objective->metric}, {"minimize", sweep.objective->minimize}}},
                      {"ended", std::move(ended)},
                      {"valued", std::move(valued)},
                      {"count", count}};
    if (!ax_.started()) TORCHX_RETURN_IF_ERROR(ax_.Start("torchx.sweeps._ax", "an ax sweep's trials"));
    TORCHX_ASSIGN_OR_RETURN(std::string line, ax_.Call(request.dump()));
    AxJson reply = AxJson::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!reply.is_object()) return InternalError("torchx.sweeps._ax: not a JSON reply: " + line.substr(0, 200));
    if (reply.contains("error")) return FailedPreconditionError(reply["error"].dump());
    std::vector<Proposal> out;
    for (const AxJson& t : reply.value("trials", AxJson::array())) {
      Proposal p;
      p.index = t.value("index", -1);
      p.generator = t.value("generator", "");
      // In the space's order: the trial's command line reads as the file does.
      for (const ParamSpec& spec : sweep.space.params) {
        if (t.contains("values") && t["values"].contains(spec.name)) {
          p.values.emplace_back(spec.name, internal::ValueFromJson(t["values"][spec.name]));
        }
      }
      out.push_back(std::move(p));
    }
    return out;
  }

 private:
  internal::PythonBridge ax_;
};

}  // namespace

std::unique_ptr<TrialBackend> MakeRunnerTrialBackend(runner::Runner& runner) {
  return std::make_unique<RunnerTrialBackend>(runner);
}

std::string TrackerConfigPath(const SweepRecord& r) { return r.results_dir + ".tracker.conf"; }

// Not `.json`: the sweeps directory's `.json` files are the records.
std::string AxStatePath(const SweepRecord& r) { return r.results_dir + ".ax-state"; }

specs::Tracking TrialTracking(const SweepRecord& r) {
  specs::Tracking t;
  t.parent_run_id = SweepHandle(r);
  for (const auto& tracker : r.trackers) {
    if (tracker.first != "fsspec") t.trackers.push_back(tracker);  // the sweep's own fsspec tracker wins
  }
  t.trackers.emplace_back("fsspec", TrackerConfigPath(r));
  return t;
}

Result<specs::AppDef> BuildTrialApp(runner::Runner& runner, const SweepRecord& r, const TrialRecord& t) {
  specs::AppDef app;
  if (!r.component.empty()) {
    std::vector<std::string> args;
    // A swept name with no placeholder is one of the component's own parameters (PlanSweep
    // checked), passed before the rest so it never lands among the script's arguments.
    for (const auto& [name, value] : t.values) {
      if (!HasPlaceholder(r.args, name)) {
        args.push_back("--" + name);
        args.push_back(ValueText(value));
      }
    }
    for (const std::string& a : r.args) args.push_back(Substitute(a, t.values));
    auto built = runner.ComponentAppDef(r.component, args);
    if (!built) return built.error();
    app = std::move(*built);
  } else {
    TORCHX_ASSIGN_OR_RETURN(app, specs::AppDefFromJson(r.app_json, runner.build_context().named_resources));
    for (specs::Role& role : app.roles) {
      role.entrypoint = Substitute(role.entrypoint, t.values);
      for (std::string& a : role.args) a = Substitute(a, t.values);
      for (auto& [k, v] : role.env) v = Substitute(v, t.values);
    }
  }
  app.name = fmt::format("{}-{}", specs::NormalizeName(r.name, 32), t.index);
  for (specs::Role& role : app.roles) {
    role.env["TORCHX_SWEEP_ID"] = SweepHandle(r);
    role.env["TORCHX_TRIAL_INDEX"] = std::to_string(t.index);
    role.env["TORCHX_SWEEP_RESULTS"] = r.results_dir;
  }
  return app;
}

}  // namespace torchx::sweeps
