// Ray's Job Submission REST API on one dashboard (http://host:port), each call typed: what the
// `ray` scheduler sends and how each answer maps to a status. Every call goes through an
// internal::HttpClient, which unit tests answer in Ray's place (ray_scheduler_test.cc).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "http/http.h"
#include "schedulers/ray/ray_job.h"
#include "torchx/status.h"

namespace torchx::schedulers::ray {

class RayClient {
 public:
  /// `address`: host:port. `token`: Ray's auth token (RAY_AUTH_TOKEN) sent as a bearer token; empty: none.
  RayClient(std::shared_ptr<internal::HttpClient> http, std::string address, std::string token = {});

  const std::string& address() const { return address_; }

  /// GET /api/version: Ray's version ("2.60.0") and the cluster's session (a new one each time
  /// its head starts).
  struct Version {
    std::string ray_version;
    std::string session_name;
  };
  Result<Version> RayVersion() const;
  /// POST /api/jobs/ with `body` (a JSON JobSubmitRequest). kAlreadyExists when the id is taken;
  /// kInvalidArgument with Ray's words when it refuses the request.
  Status Submit(const std::string& submission_id, const std::string& body) const;
  /// GET /api/jobs/{id}; nullopt when Ray has no such job (never submitted, or deleted).
  Result<std::optional<RayJob>> Job(const std::string& submission_id) const;
  /// GET /api/jobs/.
  Result<std::vector<RayJob>> Jobs() const;
  /// POST /api/jobs/{id}/stop; OK for an unknown or ended job.
  Status Stop(const std::string& submission_id) const;
  /// DELETE /api/jobs/{id}: whether Ray deleted it (it answers `deleted: false` while the job's
  /// supervisor is still ending). kNotFound for an unknown job, kFailedPrecondition for a live one.
  Result<bool> Delete(const std::string& submission_id) const;
  /// GET /api/jobs/{id}/logs: the whole log so far; nullopt for an unknown job.
  Result<std::optional<std::string>> Logs(const std::string& submission_id) const;
  /// GET /worker/traceback (the dashboard's "Stack Trace"): the node's agent runs `py-spy dump`
  /// on `pid` and its subprocesses; py-spy's text. kFailedPrecondition with Ray's words when the
  /// agent cannot (py-spy missing, attaching refused, profiling disabled on the cluster).
  Result<std::string> Traceback(const std::string& node_id, int pid) const;
  /// GET /worker/cpu_profile: `pid` and its subprocesses sampled by the node's agent for
  /// `seconds`, as speedscope JSON. Errors as Traceback's.
  Result<std::string> CpuProfile(const std::string& node_id, int pid, int seconds) const;
  /// GET /nodes?view=summary: every node with its resources and readings (JSON, as Ray sends it).
  Result<std::string> NodesSummary() const;
  /// GET /api/packages/gcs/{name}: whether the cluster has the package.
  Result<bool> HasPackage(const std::string& name) const;
  /// PUT /api/packages/gcs/{name}.
  Status UploadPackage(const std::string& name, const std::string& zip) const;

 private:
  Result<internal::HttpResponse> Call(const std::string& method, const std::string& path, std::string body = {},
                                      std::string content_type = "application/json", long timeout_ms = 60000) const;
  /// The call as Ray answered it, a refusal (401, 403) included: what the profiling calls read,
  /// since Ray refuses them with 403 when its profiling is off.
  Result<internal::HttpResponse> Send(const std::string& method, const std::string& path, std::string body = {},
                                      std::string content_type = "application/json", long timeout_ms = 60000) const;
  /// kUnavailable naming the call, its status and Ray's answer.
  Status Failed(const std::string& call, const internal::HttpResponse& resp) const;

  std::shared_ptr<internal::HttpClient> http_;
  std::string address_;
  internal::HttpTransport transport_;
  std::string auth_header_;  ///< "Authorization: Bearer <token>"; empty: none
};

}  // namespace torchx::schedulers::ray
