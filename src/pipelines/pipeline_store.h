// The record of each pipeline: one JSON document per pipeline under <state_dir>/pipelines,
// replaced atomically (write, fsync, rename) under one lock file, so the launcher, the driver and
// a `cancel` from another terminal never see half a record. Documents are small and written a
// few times per step; a database would buy nothing here. Directory 0700, files 0600.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

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

class PipelineStore {
 public:
  /// `dir`: <state_dir>/pipelines (created on first write).
  explicit PipelineStore(std::string dir) : dir_(std::move(dir)) {}

  /// kAlreadyExists for an id in use.
  Status Create(const PipelineRecord& record);
  /// nullopt for an unknown id.
  Result<std::optional<PipelineRecord>> Get(const std::string& id) const;
  /// Reads, applies `edit` and writes back, all under the lock (nothing written if `edit` fails).
  /// kNotFound for an unknown id. Returns the record as written.
  Result<PipelineRecord> Update(const std::string& id, const std::function<Status(PipelineRecord&)>& edit);
  /// Every record, newest first (unreadable documents are skipped).
  Result<std::vector<PipelineRecord>> List() const;
  Status Remove(const std::string& id);

  const std::string& dir() const { return dir_; }
  /// Creates the directory (0700) if it is missing.
  Status EnsureDir() const;

 private:
  std::string PathOf(const std::string& id) const;
  Status Write(const PipelineRecord& record) const;
  std::string dir_;
};

/// Records as JSON and back (exposed for tests).
std::string PipelineRecordToJson(const PipelineRecord& record);
Result<PipelineRecord> PipelineRecordFromJson(const std::string& text);

}  // namespace torchx::pipelines
