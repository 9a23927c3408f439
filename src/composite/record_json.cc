#include "composite/record_json.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace torchx::composite {

RecordJson OptionalNumber(const std::optional<double>& v) { return v ? RecordJson(*v) : RecordJson(nullptr); }

std::optional<double> NumberAt(const RecordJson& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string WriteRecord(const RecordHeader& h, const std::function<void(RecordJson&)>& fill) {
  RecordJson j = {{"id", h.id},
                  {"name", h.name},
                  {"session", h.session},
                  {"cwd", h.cwd},
                  {"created", h.created},
                  {"cancel_requested", h.cancel_requested},
                  {"final_state",
                   h.final_state ? RecordJson(std::string(specs::AppStateName(*h.final_state))) : RecordJson(nullptr)},
                  {"msg", h.msg}};
  fill(j);
  return j.dump(-1, ' ', false, RecordJson::error_handler_t::replace);
}

Status ReadRecord(const std::string& text, std::string_view kind, RecordHeader& h,
                  const std::function<Status(const RecordJson&)>& fill) {
  try {
    RecordJson j = RecordJson::parse(text);
    h.id = j.at("id").get<std::string>();
    h.name = j.at("name").get<std::string>();
    h.session = j.at("session").get<std::string>();
    h.cwd = j.at("cwd").get<std::string>();
    h.created = j.at("created").get<double>();
    h.cancel_requested = j.at("cancel_requested").get<bool>();
    if (!j.at("final_state").is_null()) {
      TORCHX_ASSIGN_OR_RETURN(h.final_state, specs::ParseAppState(j["final_state"].get<std::string>()));
    }
    h.msg = j.at("msg").get<std::string>();
    return fill(j);
  } catch (const RecordJson::exception& e) {
    return InternalError(fmt::format("{} record: {}", kind, e.what()));
  }
}

void WriteChild(const ChildRecord& c, RecordJson& out) {
  out["phase"] = std::string(ChildPhaseName(c.phase));
  out["handle"] = c.handle;
  out["state"] = std::string(specs::AppStateName(c.state));
  out["msg"] = c.msg;
  out["submitted"] = OptionalNumber(c.submitted);
  out["ended"] = OptionalNumber(c.ended);
  // The claim, while there is one (and after it, where the kind keeps it): a 10,000-trial record
  // whose trials cleared theirs carries none.
  if (c.phase == ChildPhase::kSubmitting || !c.planned.handle.empty() || !c.planned.key.empty()) {
    out["planned_handle"] = c.planned.handle;
    out["planned_final"] = c.planned.id_is_final;
    out["claimed"] = c.planned.claimed;
    if (!c.planned.key.empty()) {
      out["planned_key"] = c.planned.key;
      out["planned_scheduler"] = c.planned.scheduler;
    }
  }
}

Status ReadChild(const RecordJson& in, std::string_view kind, ChildRecord& c) {
  TORCHX_ASSIGN_OR_RETURN(c.phase, ParseChildPhase(in.at("phase").get<std::string>(), kind));
  c.handle = in.at("handle").get<std::string>();
  TORCHX_ASSIGN_OR_RETURN(c.state, specs::ParseAppState(in.at("state").get<std::string>()));
  // A managed attempt written before the shared record called its message `reason`.
  c.msg = in.contains("msg") ? in["msg"].get<std::string>() : in.value("reason", "");
  // Records written before children were timed have neither.
  c.submitted = NumberAt(in, "submitted");
  c.ended = NumberAt(in, "ended");
  c.planned.handle = in.value("planned_handle", "");
  c.planned.id_is_final = in.value("planned_final", false);
  c.planned.claimed = NumberAt(in, "claimed").value_or(0);
  c.planned.key = in.value("planned_key", "");
  c.planned.scheduler = in.value("planned_scheduler", "");
  return OkStatus();
}

}  // namespace torchx::composite
