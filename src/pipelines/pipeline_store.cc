#include "pipelines/pipeline_store.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "composite/record_json.h"

namespace torchx::pipelines {

using composite::RecordJson;

StepRecord* PipelineRecord::Step(const std::string& step_name) {
  for (StepRecord& s : steps) {
    if (s.name == step_name) return &s;
  }
  return nullptr;
}

std::string PipelineRecordToJson(const PipelineRecord& r) {
  return composite::WriteRecord(r, [&r](RecordJson& j) {
    j["sequenced_by"] = std::string(SequencerName(r.sequenced_by));
    RecordJson steps = RecordJson::array();
    for (const StepRecord& s : r.steps) {
      RecordJson step = {{"name", s.name},
                         {"depends_on", s.depends_on},
                         {"scheduler", s.scheduler},
                         {"app", RecordJson::parse(s.app_json)},
                         {"cfg", RecordJson::parse(s.cfg_json)}};
      if (!s.managed_json.empty()) step["managed"] = RecordJson::parse(s.managed_json);
      composite::WriteChild(s, step);
      steps.push_back(std::move(step));
    }
    j["steps"] = std::move(steps);
  });
}

Result<PipelineRecord> PipelineRecordFromJson(const std::string& text) {
  PipelineRecord r;
  TORCHX_RETURN_IF_ERROR(composite::ReadRecord(text, "pipeline", r, [&r](const RecordJson& j) -> Status {
    if (j.contains("sequenced_by")) {
      std::string by = j.at("sequenced_by").get<std::string>();
      if (by != "driver" && by != "scheduler") {
        return InvalidArgumentError(
            fmt::format("pipeline record: sequenced_by: invalid value '{}', must be one of [driver, scheduler]", by));
      }
      r.sequenced_by = by == "scheduler" ? Sequencer::kScheduler : Sequencer::kDriver;
    } else {  // written before sequenced_by: only Slurm sequenced natively then
      r.sequenced_by = j.at("slurm_native").get<bool>() ? Sequencer::kScheduler : Sequencer::kDriver;
    }
    for (const RecordJson& s : j.at("steps")) {
      StepRecord step;
      step.name = s.at("name").get<std::string>();
      step.depends_on = s.at("depends_on").get<std::vector<std::string>>();
      step.scheduler = s.at("scheduler").get<std::string>();
      step.app_json = s.at("app").dump();
      step.cfg_json = s.at("cfg").dump();
      if (s.contains("managed")) step.managed_json = s.at("managed").dump();
      TORCHX_RETURN_IF_ERROR(composite::ReadChild(s, "pipeline", step));
      r.steps.push_back(std::move(step));
    }
    return OkStatus();
  }));
  return r;
}

}  // namespace torchx::pipelines
