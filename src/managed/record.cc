#include "managed/record.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "torchx/specs/app_handle.h"
#include "torchx/specs/serialize.h"

namespace torchx::managed {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kPhaseNames[] = {"submitting", "submitted", "done", "refused"};

Json OptNumber(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }
std::optional<double> NumberOr(const Json& j, const char* key) {
  if (j.contains(key) && j[key].is_number()) return j[key].get<double>();
  return std::nullopt;
}

}  // namespace

std::string_view AttemptPhaseName(AttemptPhase p) { return kPhaseNames[static_cast<int>(p)]; }

std::string ManagedDir(const std::string& state_dir) { return (std::filesystem::path(state_dir) / "managed").string(); }

std::string ManagedRecordToJson(const ManagedRecord& r) {
  Json targets = Json::array();
  for (const TargetRecord& t : r.targets) {
    targets.push_back({{"scheduler", t.scheduler}, {"cfg", Json::parse(t.cfg_json)}, {"label", t.label}});
  }
  Json attempts = Json::array();
  for (const AttemptRecord& a : r.attempts) {
    attempts.push_back({{"index", a.index},
                        {"target", a.target},
                        {"phase", kPhaseNames[static_cast<int>(a.phase)]},
                        {"planned_id", a.planned_id},
                        {"planned_final", a.planned_final},
                        {"handle", a.handle},
                        {"state", std::string(specs::AppStateName(a.state))},
                        {"why", a.why},
                        {"cause", a.cause},
                        {"reason", a.reason},
                        {"submitted", OptNumber(a.submitted)},
                        {"started", OptNumber(a.started)},
                        {"ended", OptNumber(a.ended)},
                        {"seen", OptNumber(a.seen)},
                        {"claimed", OptNumber(a.claimed)}});
  }
  Json j = {{"id", r.id},
            {"name", r.name},
            {"session", r.session},
            {"cwd", r.cwd},
            {"created", r.created},
            {"app", Json::parse(r.app_json)},
            {"targets", std::move(targets)},
            {"max_recoveries", r.max_recoveries},
            {"recover_on", r.recover_on},
            {"start_timeout", OptNumber(r.start_timeout)},
            {"checkpoint_dir", r.checkpoint_dir},
            {"cancel_requested", r.cancel_requested},
            {"final_state", r.final_state ? Json(std::string(specs::AppStateName(*r.final_state))) : Json(nullptr)},
            {"msg", r.msg},
            {"msg_transient", r.msg_transient},
            {"submit_retry_since", OptNumber(r.submit_retry_since)},
            {"attempts", std::move(attempts)}};
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<ManagedRecord> ManagedRecordFromJson(const std::string& text) {
  try {
    Json j = Json::parse(text);
    ManagedRecord r;
    r.id = j.at("id").get<std::string>();
    r.name = j.at("name").get<std::string>();
    r.session = j.at("session").get<std::string>();
    r.cwd = j.at("cwd").get<std::string>();
    r.created = j.at("created").get<double>();
    r.app_json = j.at("app").dump();
    for (const Json& t : j.at("targets")) {
      r.targets.push_back({t.at("scheduler").get<std::string>(), t.at("cfg").dump(), t.at("label").get<std::string>()});
    }
    r.max_recoveries = j.at("max_recoveries").get<int>();
    r.recover_on = j.at("recover_on").get<std::vector<std::string>>();
    r.start_timeout = NumberOr(j, "start_timeout");
    r.checkpoint_dir = j.at("checkpoint_dir").get<std::string>();
    r.cancel_requested = j.at("cancel_requested").get<bool>();
    if (!j.at("final_state").is_null()) {
      TORCHX_ASSIGN_OR_RETURN(auto st, specs::ParseAppState(j["final_state"].get<std::string>()));
      r.final_state = st;
    }
    r.msg = j.at("msg").get<std::string>();
    r.msg_transient = j.value("msg_transient", false);
    r.submit_retry_since = NumberOr(j, "submit_retry_since");
    for (const Json& a : j.at("attempts")) {
      AttemptRecord ar;
      ar.index = a.at("index").get<int>();
      ar.target = a.at("target").get<int>();
      if (ar.target < 0 || ar.target >= static_cast<int>(r.targets.size())) {
        return InvalidArgumentError(fmt::format("managed record: attempt {} names target {}", ar.index, ar.target));
      }
      std::string phase = a.at("phase").get<std::string>();
      auto it = std::find(std::begin(kPhaseNames), std::end(kPhaseNames), phase);
      if (it == std::end(kPhaseNames)) {
        return InvalidArgumentError(fmt::format("managed record: unknown phase `{}`", phase));
      }
      ar.phase = static_cast<AttemptPhase>(it - std::begin(kPhaseNames));
      ar.planned_id = a.at("planned_id").get<std::string>();
      ar.planned_final = a.value("planned_final", false);
      ar.handle = a.at("handle").get<std::string>();
      TORCHX_ASSIGN_OR_RETURN(ar.state, specs::ParseAppState(a.at("state").get<std::string>()));
      ar.why = a.at("why").get<std::string>();
      ar.cause = a.at("cause").get<std::string>();
      ar.reason = a.at("reason").get<std::string>();
      ar.submitted = NumberOr(a, "submitted");
      ar.started = NumberOr(a, "started");
      ar.ended = NumberOr(a, "ended");
      ar.seen = NumberOr(a, "seen");
      ar.claimed = NumberOr(a, "claimed");
      r.attempts.push_back(std::move(ar));
    }
    return r;
  } catch (const Json::exception& e) {
    return InternalError(fmt::format("managed record: {}", e.what()));
  }
}

Result<specs::AppDef> AttemptApp(const ManagedRecord& r, int index) {
  TORCHX_ASSIGN_OR_RETURN(specs::AppDef app, specs::AppDefFromJson(r.app_json));
  std::string handle = specs::MakeAppHandle(std::string(kSchedulerName), r.session, r.id);
  for (specs::Role& role : app.roles) {
    role.env[std::string(kCheckpointDirEnv)] = r.checkpoint_dir;
    role.env[std::string(kRecoveryCountEnv)] = std::to_string(index);
    role.env[std::string(kManagedHandleEnv)] = handle;
  }
  return app;
}

}  // namespace torchx::managed
