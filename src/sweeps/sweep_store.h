// The record of each sweep under <state_dir>/sweeps, kept by the kernel's record store
// (composite/record_store.h: a header line and a line per trial; a trial that moves is one line
// appended to the journal). The record holds the trials' template once (component and arguments,
// or an AppDef) and each trial's values, so a trial's AppDef is rebuilt from the two when it is
// submitted and a 10,000-trial record stays small.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "composite/record.h"
#include "composite/record_codec.h"
#include "composite/record_store.h"
#include "torchx/specs/app_state.h"
#include "torchx/status.h"
#include "torchx/sweeps/sweep.h"

namespace torchx::sweeps {

using composite::ChildPhase;

/// A trial: the composite's child record (phase, handle, state, times) and what is a trial's own.
struct TrialRecord : composite::ChildRecord {
  int index = 0;
  Assignment values;
  /// What it reported, each metric's last value (the objective's own entry is its best when the
  /// objective says so), in first-reported order.
  std::vector<std::pair<std::string, double>> metrics;
  std::optional<double> objective;
  std::string generator;  ///< ax: what proposed it (Ax's generation node)
  int ax_index = -1;      ///< ax: Ax's index of this trial (they differ once Ax abandoned some)
  bool operator==(const TrialRecord&) const = default;
};

struct SweepRecord : composite::RecordHeader {
  std::string scheduler;
  std::string cfg_json = "{}";
  std::string component;          ///< empty with app_json
  std::vector<std::string> args;  ///< the component's arguments, placeholders unreplaced
  std::string app_json;           ///< an inline AppDef (canonical JSON), placeholders unreplaced
  /// `[component:<name>]` of the launch's .torchxconfig: a trial is built as the launch built it.
  std::vector<std::pair<std::string, std::string>> component_defaults;
  /// The launch's trackers (TORCHX_TRACKERS, .torchxconfig), which trials report to besides the
  /// sweep's own.
  std::vector<std::pair<std::string, std::optional<std::string>>> trackers;
  Space space;
  int max_parallel = 0;
  int max_failures = 0;
  std::optional<Objective> objective;
  std::string results_dir;  ///< the trials' tracker root (fsspec layout) and result-tracker base
  /// The trials went to the scheduler as one array job (its handle without the task), else "".
  std::string array_job;
  /// ax: how many trials had ended when Ax last proposed fewer than asked (it waits for data);
  /// it is asked again once more have. -1: it gave what was asked.
  int ax_short_at = -1;
  /// Every trial a managed job: the policy (managed::ChildPolicyToJson), its failover targets'
  /// options resolved at launch. Empty: plain jobs.
  std::string managed_json;
  composite::ChildList<TrialRecord> trials;
};

struct SweepParts;  // its own fields as JSON (sweep_store.cc instantiates the codec)
/// The record's lines (record_store.h): the header, and a line per trial.
using SweepCodec = composite::CodecOf<SweepRecord, TrialRecord, &SweepRecord::trials, SweepParts>;

/// Its records, under <state_dir>/sweeps.
using SweepStore = composite::StoreOf<SweepCodec, "sweep">;

/// The space as a sweep file gives it (what `describe` prints and ParseSweep reads back).
std::string SpaceToJson(const Space& space);

/// <state_dir>/sweeps.
std::string SweepsDir(const std::string& state_dir);

}  // namespace torchx::sweeps
