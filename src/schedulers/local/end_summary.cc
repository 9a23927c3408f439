#include "schedulers/local/end_summary.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_text.h"

namespace torchx::schedulers::local {

std::string EndSummaryText(const std::string& app_id, specs::AppState state, double epoch_seconds, const AppPlan& plan,
                           const std::vector<const ReplicaRecord*>& records) {
  auto str = [](const std::string& v) {
    std::string out;
    ::torchx::internal::AppendJsonString(out, v);
    return out;
  };
  std::map<std::string, std::vector<size_t>> by_role;
  for (size_t i = 0; i < plan.replicas.size(); ++i) by_role[plan.replicas[i].role].push_back(i);
  std::string text = fmt::format(
      "{{\n  \"app_id\": {},\n  \"final_state\": {},\n  \"last_updated\": {},\n  \"log_dir\": {},\n  \"roles\": {{",
      str(app_id), str(std::string(specs::AppStateName(state))), nlohmann::json(epoch_seconds).dump(),
      str(plan.app_dir));
  bool first_role = true;
  for (const auto& [role, indices] : by_role) {
    text += fmt::format("{}\n    {}: [", first_role ? "" : ",", str(role));
    first_role = false;
    for (size_t k = 0; k < indices.size(); ++k) {
      const ReplicaPlan& rp = plan.replicas[indices[k]];
      const ReplicaRecord* r = indices[k] < records.size() ? records[indices[k]] : nullptr;
      std::string exit_code = r && r->exit_code ? std::to_string(*r->exit_code) : "null";
      text += fmt::format(
          "{}\n      {{\n        \"error_file\": {},\n        \"exitcode\": {},\n        \"pid\": {},\n"
          "        \"replica_id\": {},\n        \"stderr\": {},\n        \"stdout\": {}\n      }}",
          k ? "," : "", str(rp.error_file), exit_code, r ? r->pid : 0, rp.replica_id, str(rp.log_dir + "/stderr.log"),
          str(rp.log_dir + "/stdout.log"));
    }
    text += "\n    ]";  // a role here has a replica
  }
  text += by_role.empty() ? "}\n}\n" : "\n  }\n}\n";
  return text;
}

void WriteEndSummary(const std::string& app_dir, const std::string& text) {
  if (int fd =
          ::open((std::filesystem::path(app_dir) / "SUCCESS").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      fd >= 0) {
    (void)!::write(fd, text.data(), text.size());
    ::close(fd);
  }
}

void WriteLostAppSummary(const AppRecord& app, const std::vector<ReplicaRecord>& replicas, double epoch_seconds) {
  auto plan = AppPlanFromJson(app.plan_json);
  if (!plan.ok() || plan->app_dir.empty()) return;
  std::vector<const ReplicaRecord*> records(plan->replicas.size(), nullptr);
  for (size_t i = 0; i < plan->replicas.size(); ++i) {
    for (const ReplicaRecord& r : replicas) {  // the latest attempt of each replica
      if (r.role == plan->replicas[i].role && r.replica_id == plan->replicas[i].replica_id &&
          (!records[i] || r.attempt > records[i]->attempt)) {
        records[i] = &r;
      }
    }
  }
  WriteEndSummary(plan->app_dir, EndSummaryText(app.app_id, specs::AppState::kFailed, epoch_seconds, *plan, records));
}

}  // namespace torchx::schedulers::local
