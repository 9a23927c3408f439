#include "schedulers/ray/ray_client.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_view.h"

namespace torchx::schedulers::ray {
namespace {

using internal::UrlEncode;

// Ray answers an error with plain text or {"message"/"detail": ...}; the text either way.
std::string RayWords(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object()) {
    for (const char* key : {"message", "detail", "error"}) {
      if (j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
    }
  }
  return internal::Excerpt(body);
}

}  // namespace

RayClient::RayClient(std::shared_ptr<internal::HttpClient> http, std::string address, std::string token)
    : http_(std::move(http)), address_(std::move(address)) {
  if (!token.empty()) auth_header_ = "Authorization: Bearer " + token;
}

Result<internal::HttpResponse> RayClient::Call(const std::string& method, const std::string& path, std::string body,
                                               std::string content_type, long timeout_ms) const {
  TORCHX_ASSIGN_OR_RETURN(internal::HttpResponse resp,
                          Send(method, path, std::move(body), std::move(content_type), timeout_ms));
  if (resp.status == 401 || resp.status == 403) {
    return Status(StatusCode::kPermissionDenied,
                  fmt::format("ray: the dashboard at http://{} refused {} {} (HTTP {}): set RAY_AUTH_TOKEN to the "
                              "cluster's token",
                              address_, method, path, resp.status));
  }
  return resp;
}

Result<internal::HttpResponse> RayClient::Send(const std::string& method, const std::string& path, std::string body,
                                               std::string content_type, long timeout_ms) const {
  internal::HttpRequest req;
  req.method = method;
  req.url = fmt::format("http://{}{}", address_, path);
  req.body = std::move(body);
  req.content_type = std::move(content_type);
  req.timeout_ms = timeout_ms;
  if (!auth_header_.empty()) req.headers.push_back(auth_header_);
  return http_->Call(transport_, req, fmt::format("ray: the dashboard at http://{}", address_));
}

Status RayClient::Failed(const std::string& call, const internal::HttpResponse& resp) const {
  return UnavailableError(
      fmt::format("ray: {} on http://{}: HTTP {}: {}", call, address_, resp.status, RayWords(resp.body)));
}

Result<RayClient::Version> RayClient::RayVersion() const {
  TORCHX_ASSIGN_OR_RETURN(auto resp, Call("GET", "/api/version"));
  if (resp.status != 200) return Failed("version", resp);
  internal::JsonView j = internal::JsonView::Parse(resp.body);
  Version v{j["ray_version"].Str(), j["session_name"].Str()};
  if (v.ray_version.empty()) {
    return UnavailableError(fmt::format("ray: http://{} is not a Ray dashboard (no ray_version)", address_));
  }
  return v;
}

Status RayClient::Submit(const std::string& submission_id, const std::string& body) const {
  TORCHX_ASSIGN_OR_RETURN(auto resp, Call("POST", "/api/jobs/", body));
  if (resp.status == 200) return OkStatus();
  std::string words = RayWords(resp.body);
  if (resp.status == 400 || resp.status == 500) {
    if (words.find("already exists") != std::string::npos) {
      return AlreadyExistsError(fmt::format("ray: a job {} already exists on http://{}", submission_id, address_));
    }
    if (resp.status == 400) {
      return InvalidArgumentError(fmt::format("ray: http://{} refused job {}: {}", address_, submission_id, words));
    }
  }
  return Failed("submit job " + submission_id, resp);
}

Result<std::optional<RayJob>> RayClient::Job(const std::string& submission_id) const {
  TORCHX_ASSIGN_OR_RETURN(auto resp, Call("GET", "/api/jobs/" + UrlEncode(submission_id)));
  if (resp.status == 404) return std::optional<RayJob>();
  if (resp.status != 200) return Failed("job " + submission_id, resp);
  TORCHX_ASSIGN_OR_RETURN(RayJob job, ParseRayJob(resp.body, fmt::format("ray: job {}", submission_id)));
  return std::optional<RayJob>(std::move(job));
}

Result<std::vector<RayJob>> RayClient::Jobs() const {
  TORCHX_ASSIGN_OR_RETURN(auto resp, Call("GET", "/api/jobs/"));
  if (resp.status != 200) return Failed("list jobs", resp);
  return ParseRayJobList(resp.body, "ray: list jobs");
}

Status RayClient::Stop(const std::string& submission_id) const {
  TORCHX_ASSIGN_OR_RETURN(auto resp, Call("POST", "/api/jobs/" + UrlEncode(submission_id) + "/stop"));
  if (resp.status == 200 || resp.status == 404) return OkStatus();
  return Failed("stop job " + submission_id, resp);
}

Result<bool> RayClient::Delete(const std::string& submission_id) const {
  TORCHX_ASSIGN_OR_RETURN(auto resp, Call("DELETE", "/api/jobs/" + UrlEncode(submission_id)));
  if (resp.status == 200) return internal::JsonView::Parse(resp.body)["deleted"].Bool(true);
  if (resp.status == 404) return NotFoundError(fmt::format("ray: no job {} on http://{}", submission_id, address_));
  if (resp.status == 400) {
    return FailedPreconditionError(
        fmt::format("ray: job {} cannot be deleted: {}", submission_id, RayWords(resp.body)));
  }
  return Failed("delete job " + submission_id, resp);
}

Result<std::optional<std::string>> RayClient::Logs(const std::string& submission_id) const {
  TORCHX_ASSIGN_OR_RETURN(auto resp, Call("GET", "/api/jobs/" + UrlEncode(submission_id) + "/logs"));
  if (resp.status == 404) return std::optional<std::string>();
  if (resp.status != 200) return Failed("logs of job " + submission_id, resp);
  internal::JsonView j = internal::JsonView::Parse(resp.body);
  if (!j["logs"].IsString()) {
    return UnavailableError(fmt::format("ray: logs of job {}: the answer has no `logs` text", submission_id));
  }
  return std::optional<std::string>(j["logs"].Str());
}

namespace {

// Ray answers a profiling call it could not do with 500 and the command's output, a cluster whose
// profiling is off with 403 and how to turn it on (RAY_DASHBOARD_ENABLE_PROFILING=1 on the head),
// a missing token with 401: the first line of Ray's answer, as a precondition.
Status ProfilingRefused(const std::string& what, const internal::HttpResponse& resp) {
  if (resp.status == 401) {
    return Status(StatusCode::kPermissionDenied,
                  fmt::format("ray: {} (HTTP 401): set RAY_AUTH_TOKEN to the cluster's token", what));
  }
  std::string why = resp.body.substr(0, resp.body.find('\n', resp.body.find_first_not_of(" \n")));
  if (why.size() > 300) why = why.substr(0, 300) + "...";
  return FailedPreconditionError(fmt::format("ray: {} (HTTP {}): {}", what, resp.status, why));
}

}  // namespace

Result<std::string> RayClient::Traceback(const std::string& node_id, int pid) const {
  TORCHX_ASSIGN_OR_RETURN(
      auto resp,
      Send("GET", fmt::format("/worker/traceback?pid={}&node_id={}&native=0&subprocesses=1", pid, UrlEncode(node_id))));
  if (resp.status != 200) return ProfilingRefused(fmt::format("the stack of pid {} on node {}", pid, node_id), resp);
  return resp.body;
}

Result<std::string> RayClient::CpuProfile(const std::string& node_id, int pid, int seconds) const {
  TORCHX_ASSIGN_OR_RETURN(
      auto resp, Send("GET",
                      fmt::format("/worker/cpu_profile?pid={}&node_id={}&duration={}&format=speedscope&native=0&"
                                  "subprocesses=1",
                                  pid, UrlEncode(node_id), seconds),
                      {}, "application/json", (seconds + 60) * 1000L));
  if (resp.status != 200) return ProfilingRefused(fmt::format("a profile of pid {} on node {}", pid, node_id), resp);
  return resp.body;
}

Result<std::string> RayClient::NodesSummary() const {
  TORCHX_ASSIGN_OR_RETURN(auto resp, Call("GET", "/nodes?view=summary"));
  if (resp.status != 200) return Failed("nodes", resp);
  return resp.body;
}

Result<bool> RayClient::HasPackage(const std::string& name) const {
  TORCHX_ASSIGN_OR_RETURN(auto resp, Call("GET", "/api/packages/gcs/" + UrlEncode(name)));
  if (resp.status == 200) return true;
  if (resp.status == 404) return false;
  return Failed("package " + name, resp);
}

Status RayClient::UploadPackage(const std::string& name, const std::string& zip) const {
  // A working directory may be hundreds of MiB (Ray takes up to 500): 30 minutes, not a minute.
  TORCHX_ASSIGN_OR_RETURN(auto resp,
                          Call("PUT", "/api/packages/gcs/" + UrlEncode(name), zip, "application/zip", 30 * 60 * 1000));
  if (resp.status == 200) return OkStatus();
  return Failed("upload package " + name, resp);
}

}  // namespace torchx::schedulers::ray
