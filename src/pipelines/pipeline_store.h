// The record of each pipeline under <state_dir>/pipelines, kept by the kernel's record store
// (composite/record_store.h: a header line and a line per step, changes journaled under one
// lock). Records are small and written a few times per step; a database would buy nothing here.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "composite/record.h"
#include "composite/record_codec.h"
#include "composite/record_store.h"
#include "torchx/pipelines/pipeline.h"
#include "torchx/specs/app_state.h"
#include "torchx/status.h"

namespace torchx::pipelines {

using composite::ChildPhase;

/// A step: the composite's child record (phase, handle, state, times) and what is a step's own.
struct StepRecord : composite::ChildRecord {
  std::string name;
  std::vector<std::string> depends_on;
  std::string scheduler;
  std::string app_json;  ///< the AppDef, canonical JSON
  std::string cfg_json;  ///< the step's options (specs::CfgToJson)
  /// A managed step: the record of the managed job it runs as (its id chosen at launch), which
  /// the driver submits on the `managed` scheduler. Empty: a plain job.
  std::string managed_json;
  bool operator==(const StepRecord&) const = default;
};

struct PipelineRecord : composite::RecordHeader {
  /// Who submits the steps (pipeline.h). Read from `sequenced_by`; a record written before it
  /// existed says `slurm_native` (true: the scheduler).
  Sequencer sequenced_by = Sequencer::kDriver;
  composite::ChildList<StepRecord> steps;

  /// The step named `step_name`, or null.
  const StepRecord* Step(const std::string& step_name) const;
  /// Its position in `steps` (steps.size() for none), for editing it (steps.Mut).
  size_t StepIndex(const std::string& step_name) const;
};

struct PipelineParts;  // its own fields as JSON (pipeline_store.cc instantiates the codec)
/// The record's lines (record_store.h): the header, and a line per step.
using PipelineCodec = composite::CodecOf<PipelineRecord, StepRecord, &PipelineRecord::steps, PipelineParts>;

/// Its records, under <state_dir>/pipelines.
using PipelineStore = composite::StoreOf<PipelineCodec, "pipeline">;

}  // namespace torchx::pipelines
