// The "pipeline" scheduler: pipeline handles answer status / wait / log / cancel / list /
// describe / delete like any app's, from the pipeline's record and its steps' schedulers. And the
// body of torchx-composite-driver, which moves a pipeline forward until it ends.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "composite/child_ops.h"
#include "composite/composite_scheduler.h"
#include "composite/deferred_log.h"
#include "core/json_yaml.h"
#include "pipelines/engine.h"
#include "pipelines/pipeline_store.h"
#include "torchx/managed/managed.h"
#include "torchx/pipelines/pipeline.h"

namespace torchx::pipelines {
namespace {

namespace fs = std::filesystem;

// Why a step claimed by a driver that died cannot be resolved: its scheduler cannot tell whether
// it was submitted.
std::string WhyUnknown(const StepRecord& s) {
  return fmt::format(
      "the pipeline's driver stopped while submitting this step, and {} cannot tell whether it was: not "
      "submitted again; check `torchx list -s {}`",
      s.scheduler, s.scheduler);
}

// The pipeline as the file that runs it: each step's app (as submitted), the steps it depends on,
// its scheduler and options, and a managed step's `managed:` block.
Result<std::string> PipelineDefinition(const PipelineRecord& r, bool json) {
  using Json = nlohmann::ordered_json;
  Json steps = Json::object();
  for (const StepRecord& s : r.steps) {
    Json step = {{"app", Json::parse(s.app_json)}};
    if (!s.depends_on.empty()) step["depends_on"] = s.depends_on;
    step["scheduler"] = s.scheduler;
    Json cfg = Json::parse(s.cfg_json.empty() ? "{}" : s.cfg_json);
    if (cfg.is_object() && !cfg.empty()) step["cfg"] = std::move(cfg);
    if (!s.managed_json.empty()) {
      TORCHX_ASSIGN_OR_RETURN(managed::ChildPolicy policy, managed::ChildPolicyOfPayload(s.managed_json));
      step["managed"] = Json::parse(managed::ChildPolicyToJson(policy));
    }
    steps[s.name] = std::move(step);
  }
  Json def = {{"name", r.name}, {"steps", std::move(steps)}};
  if (json) return def.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  return internal::JsonToYaml(def);
}

}  // namespace

// A pipeline for the composite kernel: its record, store and child seam, and what is its own.
struct PipelineKind : composite::KindOf<PipelineKind, PipelineRecord, StepRecord, PipelineStore, StepBackend> {
  static constexpr composite::KindNames kNames{kSchedulerName, "pipeline", "pipelines",
                                               "`torchx pipeline run FILE` (or torchx.pipelines.run in Python)"};
  static std::unique_ptr<Backend> MakeBackend(runner::Runner& runner) { return MakeRunnerStepBackend(runner); }
  static constexpr auto kChildren = &PipelineRecord::steps;
  static std::string Label(const StepRecord& s) { return "steps." + s.name; }
  static schedulers::MemberApp Member(const Record&, const StepRecord& s) { return StepMember(s); }
  // A pipeline its scheduler sequences has no driver: the launcher submitted every step.
  static bool HasDriver(const Record& r) { return r.sequenced_by == Sequencer::kDriver; }
  // Sequenced by the scheduler: refreshed from it, steps a launcher killed mid-launch left
  // unsubmitted marked not run. A driver that cannot start: what is left is marked not run, and
  // the pipeline ends once its running steps have.
  static Result<std::optional<Record>> WithoutDriver(Store& store, const std::string& id, Backend& backend,
                                                     const std::string& why) {
    auto abandon = [&why](PipelineRecord& cur) {
      if (cur.sequenced_by == Sequencer::kScheduler) {
        FailUnrecorded(cur, [](const StepRecord& s) {
          return fmt::format("the launch stopped while submitting this step; check `torchx list -s {}`", s.scheduler);
        });
        AbandonWaiting(cur, "the launch stopped before submitting it");
      } else {
        AbandonWaiting(cur, why);
      }
    };
    return composite::AbandonThenRefresh(store, id, backend, abandon, Refresh);
  }
  static schedulers::DescribeAppResponse Describe(const Record& r, Backend& backend, runner::Runner&) {
    return DescribePipeline(r, backend);
  }
  static Status Cancel(Store& store, const std::string&, const std::string& id, Backend& backend) {
    return CancelPipeline(store, id, backend);
  }
  static Result<std::unique_ptr<composite::DriverTurns>> StartTurns(Store& store, const std::string& id,
                                                                    Backend& backend, const Record& r);
};

namespace {

class PipelineScheduler final : public composite::CompositeSchedulerOf<PipelineKind> {
 public:
  using CompositeSchedulerOf::CompositeSchedulerOf;

  // `torchx describe`: the pipeline as the file that runs it (`pipeline run` takes it back).
  Result<std::optional<std::string>> CompositeDefinition(const std::string& handle, bool json) override {
    TORCHX_ASSIGN_OR_RETURN(PipelineRecord r, composite::RecordOfHandle<PipelineKind>(runner_, handle));
    TORCHX_ASSIGN_OR_RETURN(std::string def, PipelineDefinition(r, json));
    return std::optional(std::move(def));
  }

  Result<std::unique_ptr<schedulers::LogIterator>> MemberLog(const std::string& app_id,
                                                             const schedulers::LogOptions& options) override {
    TORCHX_ASSIGN_OR_RETURN(auto record, store_.Get(app_id));
    if (!record) return NotFoundError(fmt::format("pipeline {} does not exist", app_id));
    TORCHX_ASSIGN_OR_RETURN(StepRole found, FindStepRole(*record, options.role));
    schedulers::LogOptions step_options = options;
    step_options.role = found.role;
    if (!found.step->handle.empty()) return runner_.LogLines(found.step->handle, step_options);
    // A step that has not started has no lines yet; followed, its lines come once it starts.
    if (!options.follow) return schedulers::MakeLinesIterator({});
    auto look = [state_dir = state_dir_, id = app_id, step = found.step->name,
                 role = found.role](runner::Runner& runner) -> Result<composite::ChildLook> {
      PipelineStore store(PipelineKind::Dir(state_dir));
      auto backend = MakeRunnerStepBackend(runner);
      TORCHX_ASSIGN_OR_RETURN(auto record, composite::CurrentRecord<PipelineKind>(store, state_dir, id, *backend));
      const StepRecord* s = record ? record->Step(step) : nullptr;
      composite::ChildLook found_now{s ? s->handle : "", role, false};
      found_now.never = !s || s->phase == ChildPhase::kSkipped || s->phase == ChildPhase::kDone || record->final_state;
      return found_now;
    };
    return composite::MakeDeferredChildLog(registry_, session_name(), clock_, step_options, std::move(look));
  }
};

}  // namespace

void RegisterPipelineScheduler(plugins::PluginRegistry& registry) {
  composite::RegisterComposite<PipelineScheduler>(registry, kSchedulerName);
}

Result<std::unique_ptr<composite::DriverTurns>> PipelineKind::StartTurns(Store& store, const std::string& id,
                                                                         Backend& backend, const Record&) {
  // A step left "submitting": a driver died between claiming it and recording its handle. Its
  // planned handle tells whether it was submitted (adopted), was not (claimed again), or cannot
  // tell (failed: submitting it again could run it twice).
  auto resolve = [&store, id, &backend] { return ResolveClaims(store, id, backend, WhyUnknown); };
  // A lookup that fails now (the controller briefly unreachable) is no reason not to start: the
  // turns resolve what is left, under the loop's error budget.
  if (Status s = resolve(); !s.ok()) std::fprintf(stderr, "torchx-composite-driver: %s\n", s.message().c_str());
  return std::unique_ptr<composite::DriverTurns>(std::make_unique<composite::AdvancingTurns<PipelineKind>>(
      store, id, backend, [&store, id, &backend] { return Advance(store, id, backend); }, resolve));
}

int RunPipelineDriver(plugins::PluginRegistry& registry, const std::string& state_dir, const std::string& id,
                      int ready_fd) {
  return composite::RunDriverOf<PipelineKind>(registry, state_dir, id, ready_fd);
}

}  // namespace torchx::pipelines
