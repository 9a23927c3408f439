// Run-time state of an app: AppState, per-replica and per-role status, and AppStatus with
// TorchX's human text format (`torchx status`) and JSON form (`torchx status --json`).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torchx/status.h"

namespace torchx::specs {

/// TorchX's int enum; the numbers appear in JSON output, so they are part of the contract.
enum class AppState {
  kUnsubmitted = 0,
  kSubmitted = 1,
  kPending = 2,
  kRunning = 3,
  kSucceeded = 4,
  kFailed = 5,
  kCancelled = 6,
  kUnknown = 7,
};
using ReplicaState = AppState;

/// "UNSUBMITTED", "RUNNING", ... (Python's str(AppState)).
std::string_view AppStateName(AppState s);
/// Inverse of AppStateName; the error lists the valid names.
Result<AppState> ParseAppState(std::string_view name);
/// SUCCEEDED, FAILED, CANCELLED.
bool IsTerminal(AppState s);

struct ReplicaStatus {
  int id = 0;  ///< node index within the role (not the rank)
  AppState state = AppState::kUnknown;
  std::string role;
  std::string hostname;
  /// torchelastic error-file JSON, or "<NONE>".
  std::string structured_error_msg = "<NONE>";
  /// DNS name or IP other replicas reach it by, where it differs from `hostname`; empty: the same.
  std::string hostaddr = {};
  friend bool operator==(const ReplicaStatus&, const ReplicaStatus&) = default;
};

struct RoleStatus {
  std::string role;
  std::vector<ReplicaStatus> replicas;
  friend bool operator==(const RoleStatus&, const RoleStatus&) = default;
};

struct AppStatus {
  AppState state = AppState::kUnknown;
  int num_restarts = 0;
  std::string msg;
  std::string structured_error_msg = "<NONE>";
  std::optional<std::string> ui_url;
  std::vector<RoleStatus> roles;

  bool is_terminal() const { return IsTerminal(state); }
  friend bool operator==(const AppStatus&, const AppStatus&) = default;
};

/// TorchX's AppStatus.format(): the `AppStatus:` block with State / Num Restarts / Roles / Msg /
/// Structured Error Msg / UI URL, replicas sorted by id, `*` marking replica 0, "(no reply file)"
/// on failed or cancelled replicas without an error file, and torchelastic error JSON decoded
/// (exit code, local timestamp, hostname, error_msg wrapped at 80 columns). `filter_roles` empty
/// means every role.
std::string FormatAppStatus(const AppStatus& status, const std::vector<std::string>& filter_roles = {});

/// TorchX's AppStatus.to_json(), serialized: the app state as a name, replica states as ints
/// (TorchX's quirk, kept for compatibility with tools that parse it). `indent` < 0 is compact.
std::string AppStatusToJson(const AppStatus& status, const std::vector<std::string>& filter_roles = {},
                            int indent = -1);
/// Inverse of AppStatusToJson (accepts replica states as ints or names).
Result<AppStatus> AppStatusFromJson(std::string_view json);

}  // namespace torchx::specs
