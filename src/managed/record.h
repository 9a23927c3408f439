// The record of each managed run under <state_dir>/managed, kept by the kernel's record store
// (composite/record_store.h: a header line and a line per attempt, changes journaled under one
// lock): the app once, where it may run, how it recovers, and every attempt with why it was made
// and how it ended.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "composite/record.h"
#include "composite/record_codec.h"
#include "composite/record_store.h"
#include "torchx/managed/managed.h"
#include "torchx/specs/app_state.h"
#include "torchx/status.h"

namespace torchx::managed {

using composite::ChildPhase;

/// Why an attempt ended that is no FailureCause: the driver cancelled it for waiting too long, or
/// its scheduler refused it.
inline constexpr std::string_view kStartTimeout = "start_timeout";
inline constexpr std::string_view kRefused = "refused";
/// A driver died while submitting it and the scheduler has no such app: it was never submitted.
inline constexpr std::string_view kNeverSubmitted = "never_submitted";

/// An attempt: the composite's child record and what is an attempt's own. It is made when a driver
/// claims it (kSubmitting, its planned handle kept after: an earlier attempt submitted under its
/// planned id shows that the scheduler keeps the ids its dry runs choose); kRefused: its
/// scheduler refused it. `msg` is why it ended in the engine's words.
struct AttemptRecord : composite::ChildRecord {
  AttemptRecord() { phase = ChildPhase::kSubmitting; }
  int index = 0;
  int target = 0;     ///< into ManagedRecord::targets
  std::string why;    ///< why it was made
  std::string cause;  ///< why it ended other than SUCCEEDED ("" while it runs or when it succeeded)
  std::optional<double> started;
  /// When its scheduler last answered for it: an app its scheduler no longer knows is called lost
  /// (and recovered) only if it was seen alive recently, not one that may have ended long ago.
  std::optional<double> seen;
  bool operator==(const AttemptRecord&) const = default;
};

struct TargetRecord {
  std::string scheduler;
  std::string cfg_json = "{}";  ///< resolved, with what hands recovery to the driver
  std::string label;            ///< "slurm (partition=a)"
};

struct ManagedRecord : composite::RecordHeader {
  std::string app_json;  ///< canonical AppDef JSON, TorchX's env included, without the attempt's env
  std::vector<TargetRecord> targets;
  int max_recoveries = 0;
  std::vector<std::string> recover_on;  ///< cause names
  std::optional<double> start_timeout;
  std::string checkpoint_dir;
  /// `msg` is a note that lasts only while an engine cannot be reached (a submission retried, an
  /// attempt's scheduler not answering): cleared, by this flag, once it answers.
  bool msg_transient = false;
  /// Since when submissions of the next attempt fail for want of the engine (kUnavailable): they
  /// are tried again until kSubmitRetrySeconds have passed, then the attempt counts as refused.
  std::optional<double> submit_retry_since;
  composite::ChildList<AttemptRecord> attempts;
};

/// How long a submission is retried while its engine cannot be reached.
inline constexpr double kSubmitRetrySeconds = 120;
/// An app its scheduler no longer knows counts as lost by the engine only if it was seen within
/// this many seconds (else it may have ended, and been forgotten, while no driver watched).
inline constexpr double kLostIfSeenWithin = 600;
/// How stale an attempt's recorded `seen` may grow before a look records it again: a driver looks
/// every second, and a record written (and fsync'd) per look would cost every idle managed job a
/// write a second for a fact read only against kLostIfSeenWithin.
inline constexpr double kSeenRecordedEvery = 60;

/// <state_dir>/managed.
std::string ManagedDir(const std::string& state_dir);

struct ManagedParts;  // its own fields as JSON (record.cc instantiates the codec)
/// The record's lines (record_store.h): the header, and a line per attempt.
using ManagedCodec = composite::CodecOf<ManagedRecord, AttemptRecord, &ManagedRecord::attempts, ManagedParts>;

/// Its records, under <state_dir>/managed.
using ManagedStore = composite::StoreOf<ManagedCodec, "managed job">;

}  // namespace torchx::managed

namespace torchx::managed {

/// The app attempt `index` runs: the record's app with every role's TORCHX_CHECKPOINT_DIR,
/// TORCHX_RECOVERY_COUNT (`index`) and TORCHX_MANAGED_HANDLE set.
Result<specs::AppDef> AttemptApp(const ManagedRecord& r, int index);

}  // namespace torchx::managed

namespace torchx::managed {

/// Creates run `r`'s record under `state_dir` (stamped now), its checkpoint directory, and starts
/// its driver; returns its id. Nothing is left behind on failure (kAlreadyExists for an id in use).
Result<std::string> StartManaged(const std::string& state_dir, ManagedRecord r);

}  // namespace torchx::managed
