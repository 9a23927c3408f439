#include "managed/record.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "composite/record_codec_impl.h"

#include "torchx/specs/app_handle.h"
#include "torchx/specs/serialize.h"

namespace torchx::managed {

using composite::NumberAt;
using composite::OptionalNumber;
using composite::RecordJson;

std::string ManagedDir(const std::string& state_dir) { return (std::filesystem::path(state_dir) / "managed").string(); }

// What a managed job's record holds besides the shared header and child fields.
struct ManagedParts {
  static constexpr std::string_view kNoun = "managed";
  static constexpr const char* kChildrenKey = "attempts";

  static void WriteOwn(const ManagedRecord& r, RecordJson& j) {
    RecordJson targets = RecordJson::array();
    for (const TargetRecord& t : r.targets) {
      targets.push_back({{"scheduler", t.scheduler}, {"cfg", RecordJson::parse(t.cfg_json)}, {"label", t.label}});
    }
    j["app"] = RecordJson::parse(r.app_json);
    j["targets"] = std::move(targets);
    j["max_recoveries"] = r.max_recoveries;
    j["recover_on"] = r.recover_on;
    j["start_timeout"] = OptionalNumber(r.start_timeout);
    j["checkpoint_dir"] = r.checkpoint_dir;
    j["msg_transient"] = r.msg_transient;
    j["submit_retry_since"] = OptionalNumber(r.submit_retry_since);
  }

  static Status ReadOwn(const RecordJson& j, ManagedRecord& r) {
    r.app_json = j.at("app").dump();
    for (const RecordJson& t : j.at("targets")) {
      r.targets.push_back({t.at("scheduler").get<std::string>(), t.at("cfg").dump(), t.at("label").get<std::string>()});
    }
    r.max_recoveries = j.at("max_recoveries").get<int>();
    r.recover_on = j.at("recover_on").get<std::vector<std::string>>();
    r.start_timeout = NumberAt(j, "start_timeout");
    r.checkpoint_dir = j.at("checkpoint_dir").get<std::string>();
    r.msg_transient = j.value("msg_transient", false);
    r.submit_retry_since = NumberAt(j, "submit_retry_since");
    return OkStatus();
  }

  static void WriteChildJson(const AttemptRecord& a, RecordJson& one) {
    one["index"] = a.index;
    one["target"] = a.target;
    one["why"] = a.why;
    one["cause"] = a.cause;
    composite::WriteChild(a, one);
    one["started"] = OptionalNumber(a.started);
    one["seen"] = OptionalNumber(a.seen);
  }

  static Status ReadChildJson(const RecordJson& a, AttemptRecord& ar, const ManagedRecord& r) {
    ar.index = a.at("index").get<int>();
    ar.target = a.at("target").get<int>();
    if (ar.target < 0 || ar.target >= static_cast<int>(r.targets.size())) {
      return InvalidArgumentError(fmt::format("managed record: attempt {} names target {}", ar.index, ar.target));
    }
    TORCHX_RETURN_IF_ERROR(composite::ReadChild(a, "managed", ar));
    // Written before the shared record: the planned app id, not its handle.
    if (std::string id = a.value("planned_id", ""); !id.empty() && ar.planned.handle.empty()) {
      ar.planned.handle = specs::MakeAppHandle(r.targets[ar.target].scheduler, r.session, id);
    }
    ar.why = a.at("why").get<std::string>();
    ar.cause = a.at("cause").get<std::string>();
    ar.started = NumberAt(a, "started");
    ar.seen = NumberAt(a, "seen");
    return OkStatus();
  }
};

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

template struct torchx::composite::CodecOf<torchx::managed::ManagedRecord, torchx::managed::AttemptRecord,
                                           &torchx::managed::ManagedRecord::attempts, torchx::managed::ManagedParts>;
