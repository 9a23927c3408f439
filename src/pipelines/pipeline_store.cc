#include "pipelines/pipeline_store.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "composite/record_codec_impl.h"

namespace torchx::pipelines {

using composite::RecordJson;

size_t PipelineRecord::StepIndex(const std::string& step_name) const {
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].name == step_name) return i;
  }
  return steps.size();
}

const StepRecord* PipelineRecord::Step(const std::string& step_name) const {
  size_t i = StepIndex(step_name);
  return i < steps.size() ? &steps[i] : nullptr;
}

// What a pipeline's record holds besides the shared header and child fields.
struct PipelineParts {
  static constexpr std::string_view kNoun = "pipeline";
  static constexpr const char* kChildrenKey = "steps";

  static void WriteOwn(const PipelineRecord& r, RecordJson& j) {
    j["sequenced_by"] = std::string(SequencerName(r.sequenced_by));
  }

  static Status ReadOwn(const RecordJson& j, PipelineRecord& r) {
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
    return OkStatus();
  }

  static void WriteChildJson(const StepRecord& s, RecordJson& step) {
    step["name"] = s.name;
    step["depends_on"] = s.depends_on;
    step["scheduler"] = s.scheduler;
    step["app"] = RecordJson::parse(s.app_json);
    step["cfg"] = RecordJson::parse(s.cfg_json);
    if (!s.managed_json.empty()) step["managed"] = RecordJson::parse(s.managed_json);
    composite::WriteChild(s, step);
  }

  static Status ReadChildJson(const RecordJson& s, StepRecord& step, const PipelineRecord&) {
    step.name = s.at("name").get<std::string>();
    step.depends_on = s.at("depends_on").get<std::vector<std::string>>();
    step.scheduler = s.at("scheduler").get<std::string>();
    step.app_json = s.at("app").dump();
    step.cfg_json = s.at("cfg").dump();
    if (s.contains("managed")) step.managed_json = s.at("managed").dump();
    return composite::ReadChild(s, "pipeline", step);
  }
};

}  // namespace torchx::pipelines

template struct torchx::composite::CodecOf<torchx::pipelines::PipelineRecord, torchx::pipelines::StepRecord,
                                           &torchx::pipelines::PipelineRecord::steps, torchx::pipelines::PipelineParts>;
