// The job log's framing, the launcher's half of what ray_driver.py writes: every line a replica
// printed comes as "\x1eL <role> <replica> <o|e|O|E>\x1f<text>" (O/E: the replica's last line had
// no newline; the driver added one), and the gang's status as "\x1eS <json>" (phase, placement,
// exits). Lines without a leading \x1e are Ray's or the driver's own. Pure functions of the log
// text, table-tested.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schedulers/streamed_lines.h"
#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers::ray {

/// One replica's output line, as views into the framed line.
struct ReplicaLine {
  std::string_view role;
  int replica = 0;
  bool is_stderr = false;
  std::string_view text;  ///< as the replica printed it: with its '\n', or without one it lacked
};
/// nullopt for a line that is not a replica's (Ray's own, the driver's, a status frame).
std::optional<ReplicaLine> ParseReplicaLine(std::string_view line);

/// Where a replica runs and how it ended, as the driver last said.
struct ReplicaPlace {
  std::string role;
  int replica = 0;
  std::string node_id;   ///< the Ray node it runs on
  std::string host;      ///< that node's address
  std::string hostname;  ///< the machine's name
  std::optional<int> exit_code;
  std::optional<int> pid;  ///< its command's process on that node, once started
};

enum class GangPhase { kNone, kPending, kRunning, kRestarting, kSucceeded, kFailed, kCancelled };

/// The gang's state from the driver's status frames in the log so far.
struct GangStatus {
  GangPhase phase = GangPhase::kNone;  ///< kNone: the driver has said nothing yet
  int restarts = 0;
  std::vector<ReplicaPlace> replicas;  ///< from the latest start, with the exits since
  // The failure that ended the gang (phase kFailed), or the last one it restarted from.
  std::string failed_role;
  std::optional<int> failed_replica;
  std::optional<int> failed_exit_code;  ///< nullopt: its node was lost
  std::string failure_cause;            ///< "user_error" or "node_failure"; empty if none
  std::vector<std::string> stderr_tail;
};
GangStatus ReadGangStatus(std::string_view log);

/// The error type of a job Ray no longer knows (its head restarted, or it was deleted outside torchx).
inline constexpr std::string_view kJobLost = "TORCHX_JOB_LOST";

/// Why a job that did not succeed ended: the gang's own failure where the driver said one (a
/// replica's exit: user_error; a lost node: node_failure), else Ray's error type (a supervisor
/// or driver that died, a job Ray lost: engine_lost; a runtime env that would not set up: user_error), STOPPED:
/// cancelled. `status`, `error_type`, `message`: the job's, as Ray has them.
FailureReport ClassifyRayFailure(std::string_view status, std::string_view error_type, std::string_view message,
                                 const GangStatus& gang);

/// `text` (Ray's message, which ends with the log's last part) as a person reads it: status frames
/// dropped, a replica's line as "<role>/<replica> <line>".
std::string ReadableLog(std::string_view text);

/// Splits fed log text into the lines of one replica's stream(s), unframed.
std::unique_ptr<LineDecoder> MakeReplicaLineDecoder(std::string role, int replica, LogStream stream);

}  // namespace torchx::schedulers::ray
