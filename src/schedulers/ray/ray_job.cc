#include "schedulers/ray/ray_job.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace torchx::schedulers::ray {
namespace {

using Json = nlohmann::json;

std::string JobStr(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<double> JobMillis(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  double ms = it->get<double>();
  if (!std::isfinite(ms) || ms <= 0) return std::nullopt;
  return ms / 1000.0;
}

Result<RayJob> FromJson(const Json& j, std::string_view what) {
  if (!j.is_object()) return UnavailableError(fmt::format("{}: the answer is not a job's details", what));
  RayJob job;
  job.submission_id = JobStr(j, "submission_id");
  job.status = JobStr(j, "status");
  if (job.status.empty()) return UnavailableError(fmt::format("{}: the job's details have no status", what));
  job.message = JobStr(j, "message");
  job.error_type = JobStr(j, "error_type");
  job.entrypoint = JobStr(j, "entrypoint");
  job.driver_node_id = JobStr(j, "driver_node_id");
  job.start_time = JobMillis(j, "start_time");
  job.end_time = JobMillis(j, "end_time");
  if (auto it = j.find("driver_exit_code"); it != j.end() && it->is_number_integer()) {
    auto code = it->get<long long>();
    if (code >= -1000 && code <= 1000) job.driver_exit_code = static_cast<int>(code);
  }
  if (auto it = j.find("metadata"); it != j.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      if (v.is_string()) job.metadata[k] = v.get<std::string>();
    }
  }
  return job;
}

Json ParseBody(std::string_view body) { return Json::parse(body, nullptr, /*allow_exceptions=*/false); }

}  // namespace

Result<RayJob> ParseRayJob(std::string_view body, std::string_view what) {
  Json j = ParseBody(body);
  if (j.is_discarded()) return UnavailableError(fmt::format("{}: the answer is not JSON", what));
  TORCHX_ASSIGN_OR_RETURN(RayJob job, FromJson(j, what));
  if (job.submission_id.empty())
    return UnavailableError(fmt::format("{}: the job's details have no submission_id", what));
  return job;
}

Result<std::vector<RayJob>> ParseRayJobList(std::string_view body, std::string_view what) {
  Json j = ParseBody(body);
  if (j.is_discarded() || !j.is_array())
    return UnavailableError(fmt::format("{}: the answer is not a JSON list", what));
  std::vector<RayJob> out;
  for (const Json& item : j) {
    if (!item.is_object() || JobStr(item, "submission_id").empty()) continue;
    TORCHX_ASSIGN_OR_RETURN(RayJob job, FromJson(item, what));
    out.push_back(std::move(job));
  }
  return out;
}

specs::AppState RayJobState(std::string_view status) {
  using specs::AppState;
  if (status == "PENDING") return AppState::kPending;
  if (status == "RUNNING") return AppState::kRunning;
  if (status == "STOPPED") return AppState::kCancelled;
  if (status == "SUCCEEDED") return AppState::kSucceeded;
  if (status == "FAILED") return AppState::kFailed;
  return AppState::kUnknown;
}

}  // namespace torchx::schedulers::ray
