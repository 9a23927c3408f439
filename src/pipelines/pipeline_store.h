// The record of each pipeline: one JSON document per pipeline under <state_dir>/pipelines, kept
// by a DocumentStore (atomic replacement under one lock). Documents are small and written a few
// times per step; a database would buy nothing here.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "composite/claims.h"
#include "composite/record_store.h"
#include "torchx/pipelines/pipeline.h"
#include "torchx/specs/app_state.h"
#include "torchx/status.h"

namespace torchx::pipelines {

/// Where a step is in its life. kDone and kSkipped are final.
enum class StepPhase { kWaiting, kSubmitting, kSubmitted, kDone, kSkipped };

struct StepRecord {
  std::string name;
  std::vector<std::string> depends_on;
  std::string scheduler;
  std::string app_json;  ///< the AppDef, canonical JSON
  std::string cfg_json;  ///< the step's options (specs::CfgToJson)
  StepPhase phase = StepPhase::kWaiting;
  std::string handle;  ///< once submitted
  /// While kSubmitting: the handle its dry run chose, whether its scheduler keeps it, and when it
  /// was claimed (composite/claims.h: how a driver that finds the claim unrecorded resolves it).
  composite::PlannedChild planned;
  /// Last known state: terminal once kDone; CANCELLED once kSkipped.
  specs::AppState state = specs::AppState::kUnsubmitted;
  std::string msg;
  std::optional<double> submitted;  ///< epoch seconds, once its handle is recorded
  std::optional<double> ended;      ///< epoch seconds, when the pipeline first saw it end
};

struct PipelineRecord {
  std::string id;
  std::string name;
  std::string session;
  std::string cwd;     ///< where the run was started (steps are submitted from it)
  double created = 0;  ///< epoch seconds
  /// Who submits the steps (pipeline.h). Read from `sequenced_by`; a record written before it
  /// existed says `slurm_native` (true: the scheduler).
  Sequencer sequenced_by = Sequencer::kDriver;
  bool cancel_requested = false;
  std::optional<specs::AppState> final_state;  ///< set once the pipeline has ended
  std::string msg;
  std::vector<StepRecord> steps;

  StepRecord* Step(const std::string& step_name);
};

/// Records as JSON and back (exposed for tests).
std::string PipelineRecordToJson(const PipelineRecord& record);
Result<PipelineRecord> PipelineRecordFromJson(const std::string& text);

class PipelineStore : public composite::RecordStore<PipelineRecord, PipelineRecordToJson, PipelineRecordFromJson> {
 public:
  /// `dir`: <state_dir>/pipelines (created on first write).
  explicit PipelineStore(std::string dir) : RecordStore(std::move(dir), "pipeline") {}
};

}  // namespace torchx::pipelines
