// The record of each managed run: one JSON document per run under <state_dir>/managed (a
// composite::DocumentStore: atomic replacement under one lock): the app once, where it may run,
// how it recovers, and every attempt with why it was made and how it ended.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "composite/record_store.h"
#include "torchx/managed/managed.h"
#include "torchx/specs/app_state.h"
#include "torchx/status.h"

namespace torchx::managed {

/// Where an attempt is. kSubmitting: claimed by a driver, not yet known to be submitted (its
/// planned id, where the scheduler chose one at dry run, tells a restarted driver whether it was);
/// kRefused: the scheduler refused it (nothing runs). kDone and kRefused are final.
enum class AttemptPhase { kSubmitting, kSubmitted, kDone, kRefused };

/// Why an attempt ended that is no FailureCause: the driver cancelled it for waiting too long, or
/// its scheduler refused it.
inline constexpr std::string_view kStartTimeout = "start_timeout";
inline constexpr std::string_view kRefused = "refused";
/// A driver died while submitting it and the scheduler has no such app: it was never submitted.
inline constexpr std::string_view kNeverSubmitted = "never_submitted";

struct AttemptRecord {
  int index = 0;
  int target = 0;  ///< into ManagedRecord::targets
  AttemptPhase phase = AttemptPhase::kSubmitting;
  std::string planned_id;      ///< the app id its dry run chose ("" where the scheduler picks at submit)
  bool planned_final = false;  ///< the scheduler submits under exactly planned_id (DryRunInfo::app_id_is_final)
  std::string handle;
  specs::AppState state = specs::AppState::kUnsubmitted;
  std::string why;     ///< why it was made
  std::string cause;   ///< why it ended other than SUCCEEDED ("" while it runs or when it succeeded)
  std::string reason;  ///< in the engine's words
  std::optional<double> submitted, started, ended;
  /// When its scheduler last answered for it: an app its scheduler no longer knows is called lost
  /// (and recovered) only if it was seen alive recently, not one that may have ended long ago.
  std::optional<double> seen;
  /// When a driver claimed it (kSubmitting): a claim whose app is not there yet is resolved only
  /// once it is older than a start still in flight could take (composite/claims.h).
  std::optional<double> claimed;
};

struct TargetRecord {
  std::string scheduler;
  std::string cfg_json = "{}";  ///< resolved, with what hands recovery to the driver
  std::string label;            ///< "slurm (partition=a)"
};

struct ManagedRecord {
  std::string id;
  std::string name;
  std::string session;
  std::string cwd;
  double created = 0;
  std::string app_json;  ///< canonical AppDef JSON, TorchX's env included, without the attempt's env
  std::vector<TargetRecord> targets;
  int max_recoveries = 0;
  std::vector<std::string> recover_on;  ///< cause names
  std::optional<double> start_timeout;
  std::string checkpoint_dir;
  bool cancel_requested = false;
  std::optional<specs::AppState> final_state;
  std::string msg;
  /// `msg` is a note that lasts only while an engine cannot be reached (a submission retried, an
  /// attempt's scheduler not answering): cleared, by this flag, once it answers.
  bool msg_transient = false;
  /// Since when submissions of the next attempt fail for want of the engine (kUnavailable): they
  /// are tried again until kSubmitRetrySeconds have passed, then the attempt counts as refused.
  std::optional<double> submit_retry_since;
  std::vector<AttemptRecord> attempts;
};

/// How long a submission is retried while its engine cannot be reached.
inline constexpr double kSubmitRetrySeconds = 120;
/// An app its scheduler no longer knows counts as lost by the engine only if it was seen within
/// this many seconds (else it may have ended, and been forgotten, while no driver watched).
inline constexpr double kLostIfSeenWithin = 600;

std::string_view AttemptPhaseName(AttemptPhase p);
std::string ManagedRecordToJson(const ManagedRecord& r);
Result<ManagedRecord> ManagedRecordFromJson(const std::string& text);

/// <state_dir>/managed.
std::string ManagedDir(const std::string& state_dir);

class ManagedStore : public composite::RecordStore<ManagedRecord, ManagedRecordToJson, ManagedRecordFromJson> {
 public:
  /// `dir`: <state_dir>/managed.
  explicit ManagedStore(std::string dir) : RecordStore(std::move(dir), "managed job") {}
};

}  // namespace torchx::managed

namespace torchx::managed {

/// The app attempt `index` runs: the record's app with every role's TORCHX_CHECKPOINT_DIR,
/// TORCHX_RECOVERY_COUNT (`index`) and TORCHX_MANAGED_HANDLE set.
Result<specs::AppDef> AttemptApp(const ManagedRecord& r, int index);

}  // namespace torchx::managed
