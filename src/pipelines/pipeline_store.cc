#include "pipelines/pipeline_store.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace torchx::pipelines {
namespace {

using Json = nlohmann::json;

constexpr const char* kPhaseNames[] = {"waiting", "submitting", "submitted", "done", "skipped"};

std::string PhaseName(StepPhase p) { return kPhaseNames[static_cast<int>(p)]; }

Result<StepPhase> ParsePhase(const std::string& s) {
  for (int i = 0; i < 5; ++i) {
    if (s == kPhaseNames[i]) return static_cast<StepPhase>(i);
  }
  return InvalidArgumentError(fmt::format("pipeline record: unknown step phase `{}`", s));
}

}  // namespace

StepRecord* PipelineRecord::Step(const std::string& step_name) {
  for (StepRecord& s : steps) {
    if (s.name == step_name) return &s;
  }
  return nullptr;
}

std::string PipelineRecordToJson(const PipelineRecord& r) {
  Json steps = Json::array();
  for (const StepRecord& s : r.steps) {
    steps.push_back({{"name", s.name},
                     {"depends_on", s.depends_on},
                     {"scheduler", s.scheduler},
                     {"app", Json::parse(s.app_json)},
                     {"cfg", Json::parse(s.cfg_json)},
                     {"phase", PhaseName(s.phase)},
                     {"handle", s.handle},
                     {"state", std::string(specs::AppStateName(s.state))},
                     {"msg", s.msg},
                     {"submitted", s.submitted ? Json(*s.submitted) : Json(nullptr)},
                     {"ended", s.ended ? Json(*s.ended) : Json(nullptr)}});
    if (!s.planned.handle.empty()) {  // only while claimed
      steps.back()["planned_handle"] = s.planned.handle;
      steps.back()["planned_final"] = s.planned.id_is_final;
      steps.back()["claimed"] = s.planned.claimed;
    }
  }
  Json j = {{"id", r.id},
            {"name", r.name},
            {"session", r.session},
            {"cwd", r.cwd},
            {"created", r.created},
            {"sequenced_by", std::string(SequencerName(r.sequenced_by))},
            {"cancel_requested", r.cancel_requested},
            {"final_state", r.final_state ? Json(std::string(specs::AppStateName(*r.final_state))) : Json(nullptr)},
            {"msg", r.msg},
            {"steps", std::move(steps)}};
  return j.dump(2, ' ', false, Json::error_handler_t::replace);
}

Result<PipelineRecord> PipelineRecordFromJson(const std::string& text) {
  try {
    Json j = Json::parse(text);
    PipelineRecord r;
    r.id = j.at("id").get<std::string>();
    r.name = j.at("name").get<std::string>();
    r.session = j.at("session").get<std::string>();
    r.cwd = j.at("cwd").get<std::string>();
    r.created = j.at("created").get<double>();
    if (j.contains("sequenced_by")) {
      std::string by = j.at("sequenced_by").get<std::string>();
      if (by != "driver" && by != "scheduler") {
        return InvalidArgumentError(
            fmt::format("pipeline record: sequenced_by: invalid value '{}', must be one of "
                        "[driver, scheduler]",
                        by));
      }
      r.sequenced_by = by == "scheduler" ? Sequencer::kScheduler : Sequencer::kDriver;
    } else {  // written before sequenced_by: only Slurm sequenced natively then
      r.sequenced_by = j.at("slurm_native").get<bool>() ? Sequencer::kScheduler : Sequencer::kDriver;
    }
    r.cancel_requested = j.at("cancel_requested").get<bool>();
    if (!j.at("final_state").is_null()) {
      TORCHX_ASSIGN_OR_RETURN(auto st, specs::ParseAppState(j["final_state"].get<std::string>()));
      r.final_state = st;
    }
    r.msg = j.at("msg").get<std::string>();
    for (const Json& s : j.at("steps")) {
      StepRecord step;
      step.name = s.at("name").get<std::string>();
      step.depends_on = s.at("depends_on").get<std::vector<std::string>>();
      step.scheduler = s.at("scheduler").get<std::string>();
      step.app_json = s.at("app").dump();
      step.cfg_json = s.at("cfg").dump();
      TORCHX_ASSIGN_OR_RETURN(step.phase, ParsePhase(s.at("phase").get<std::string>()));
      step.handle = s.at("handle").get<std::string>();
      TORCHX_ASSIGN_OR_RETURN(step.state, specs::ParseAppState(s.at("state").get<std::string>()));
      step.msg = s.at("msg").get<std::string>();
      // Records written before steps were timed have neither.
      if (s.contains("submitted") && s["submitted"].is_number()) step.submitted = s["submitted"].get<double>();
      if (s.contains("ended") && s["ended"].is_number()) step.ended = s["ended"].get<double>();
      step.planned.handle = s.value("planned_handle", "");
      step.planned.id_is_final = s.value("planned_final", false);
      step.planned.claimed = s.value("claimed", 0.0);
      r.steps.push_back(std::move(step));
    }
    return r;
  } catch (const Json::exception& e) {
    return InternalError(fmt::format("pipeline record: {}", e.what()));
  }
}

}  // namespace torchx::pipelines
