// What Ray's Job Submission API says of a job (GET /api/jobs/{id}, GET /api/jobs/), decoded: a
// pure function of the response body, fuzzed (tests/fuzz/ray_job_fuzz.cc), so a cluster of any
// version, or something else on the port, gives an error naming what it lacked, never a crash.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torchx/specs/app_state.h"
#include "torchx/status.h"

namespace torchx::schedulers::ray {

/// One job's details, as Ray's JobDetails has them (times converted from epoch ms to seconds).
struct RayJob {
  std::string submission_id;
  std::string status;      ///< PENDING, RUNNING, STOPPED, SUCCEEDED, FAILED
  std::string message;     ///< Ray's words (a failure's: the exit code and the log's last part)
  std::string error_type;  ///< e.g. JOB_ENTRYPOINT_COMMAND_ERROR, JOB_SUPERVISOR_ACTOR_DIED; empty if none
  std::string entrypoint;
  std::optional<double> start_time, end_time;  ///< epoch seconds
  std::optional<int> driver_exit_code;
  std::string driver_node_id;
  std::map<std::string, std::string> metadata;
};

/// kUnavailable naming `what` and the missing field when `body` is not a job's details (a
/// submission id and a status are required; every other field may be missing or null).
Result<RayJob> ParseRayJob(std::string_view body, std::string_view what);
/// GET /api/jobs/: a list of job details (entries without a submission id, Ray's own drivers, are
/// skipped).
Result<std::vector<RayJob>> ParseRayJobList(std::string_view body, std::string_view what);

/// Ray's job status as TorchX's state: PENDING -> PENDING, RUNNING -> RUNNING, STOPPED ->
/// CANCELLED, SUCCEEDED, FAILED; anything else UNKNOWN.
specs::AppState RayJobState(std::string_view status);

}  // namespace torchx::schedulers::ray
