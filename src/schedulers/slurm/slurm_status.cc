#include "schedulers/slurm/slurm_status.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/strings.h"

namespace torchx::schedulers::slurm {
namespace {

using Json = nlohmann::json;
using specs::AppState;

// 22.05 writes numbers; 23.02+ often write {"set": true, "infinite": false, "number": N}.
std::optional<long long> Number(const Json& j) {
  if (j.is_number_integer()) return j.get<long long>();
  if (j.is_object() && j.value("set", true) && j.contains("number") && j["number"].is_number_integer()) {
    return j["number"].get<long long>();
  }
  if (j.is_string()) {
    try {
      return std::stoll(j.get<std::string>());
    } catch (...) {
    }
  }
  return std::nullopt;
}

std::string StateOf(const Json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_array() && !j.empty() && j[0].is_string()) return j[0].get<std::string>();  // 23.11+: a list
  return "UNKNOWN";
}

int Rank(AppState s) {
  switch (s) {
    case AppState::kFailed: return 6;
    case AppState::kCancelled: return 5;
    case AppState::kUnknown: return 4;
    case AppState::kRunning: return 3;
    case AppState::kPending: return 2;
    case AppState::kSubmitted: return 1;
    default: return 0;  // SUCCEEDED, UNSUBMITTED
  }
}

}  // namespace

specs::AppState SlurmStateToAppState(std::string_view state_in) {
  std::string state(state_in.substr(0, state_in.find(' ')));
  while (!state.empty() && state.back() == '+') state.pop_back();
  static const std::map<std::string, AppState, std::less<>> kStates = {
      {"COMPLETED", AppState::kSucceeded},   {"CANCELLED", AppState::kCancelled},
      {"PENDING", AppState::kPending},       {"REQUEUED", AppState::kPending},
      {"REQUEUE_FED", AppState::kPending},   {"REQUEUE_HOLD", AppState::kPending},
      {"RESIZING", AppState::kPending},      {"SUSPENDED", AppState::kPending},
      {"CONFIGURING", AppState::kPending},   {"RUNNING", AppState::kRunning},
      {"COMPLETING", AppState::kRunning},    {"STAGE_OUT", AppState::kRunning},
      {"SIGNALING", AppState::kRunning},     {"BOOT_FAIL", AppState::kFailed},
      {"DEADLINE", AppState::kFailed},       {"FAILED", AppState::kFailed},
      {"NODE_FAIL", AppState::kFailed},      {"OUT_OF_MEMORY", AppState::kFailed},
      {"PREEMPTED", AppState::kFailed},      {"REVOKED", AppState::kFailed},
      {"TIMEOUT", AppState::kFailed},        {"SPECIAL_EXIT", AppState::kFailed},
  };
  auto it = kStates.find(state);
  return it == kStates.end() ? AppState::kUnknown : it->second;
}

namespace {

// squeue --json lists every job with ~100 fields (9 MB for 1,000 jobs); a DOM of all of it costs
// more than squeue itself. This SAX handler keeps only the fields a job's status needs.
class SqueueSax : public nlohmann::json_sax<Json> {
 public:
  std::vector<SlurmJob> jobs;
  bool saw_jobs = false;

  bool null() override { return Scalar(Json()); }
  bool boolean(bool v) override { return Scalar(Json(v)); }
  bool number_integer(number_integer_t v) override { return Scalar(Json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Scalar(Json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return Scalar(Json(v)); }
  bool string(string_t& v) override { return Scalar(Json(std::move(v))); }
  bool binary(binary_t&) override { return Scalar(Json()); }

  bool start_object(std::size_t) override {
    path_.push_back(pending_key_);
    pending_key_.clear();
    if (InJob() && path_.size() == 3) job_ = Json::object();  // {"jobs": [ {<job>} ]}
    return true;
  }
  bool end_object() override {
    if (InJob() && path_.size() == 3) Finish();
    path_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    path_.push_back(pending_key_);
    if (path_.size() == 2 && pending_key_ == "jobs") saw_jobs = true;
    pending_key_.clear();
    return true;
  }
  bool end_array() override {
    path_.pop_back();
    return true;
  }
  bool key(string_t& k) override {
    pending_key_ = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool InJob() const { return path_.size() >= 3 && path_[1] == "jobs"; }

  bool Scalar(Json v) {
    if (!InJob()) return true;
    // Depth 3: a job's own field; deeper: inside one of the fields we keep (exit_code,
    // het_job_id {number}, job_state [..]).
    static const char* kKeep[] = {"job_id", "het_job_id", "het_job_offset", "name", "job_state",
                                  "batch_host", "nodes", "exit_code", "restart_cnt"};
    const std::string& field = path_.size() == 3 ? pending_key_ : path_[3];
    if (std::find(std::begin(kKeep), std::end(kKeep), field) == std::end(kKeep)) return true;
    if (path_.size() == 3) {
      job_[field] = std::move(v);
    } else if (path_.size() == 4 && field == "job_state") {
      if (!job_.contains("job_state")) job_["job_state"] = Json::array();
      job_["job_state"].push_back(std::move(v));
    } else if (path_.size() == 4) {
      job_[field][pending_key_] = std::move(v);  // {"set", "number"}
    } else if (path_.size() == 5 && field == "exit_code" && path_[4] == "return_code") {
      job_["exit_code"]["return_code"][pending_key_] = std::move(v);
    }
    return true;
  }

  void Finish();

  std::vector<std::string> path_;
  std::string pending_key_;
  Json job_;
};

}  // namespace

Result<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text) {
  SqueueSax sax;
  bool ok = Json::sax_parse(text, &sax);
  if (!ok || !sax.saw_jobs) return InvalidArgumentError("squeue --json: expected an object with a `jobs` list");
  return std::move(sax.jobs);
}

void SqueueSax::Finish() {
  const Json& j = job_;
  auto id = Number(j.value("job_id", Json()));
  if (!id) return;
  SlurmJob job;
  auto het = Number(j.value("het_job_id", Json()));
  auto offset = Number(j.value("het_job_offset", Json()));
  if (het && *het > 0) {
    job.job_id = std::to_string(*het);
    job.component = std::to_string(offset.value_or(*id - *het));
  } else {
    job.job_id = std::to_string(*id);
  }
  job.name = j.value("name", "");
  job.state = StateOf(j.value("job_state", Json()));
  if (j.contains("batch_host") && j["batch_host"].is_string()) job.hostname = j["batch_host"];
  if (job.hostname.empty() && j.contains("nodes") && j["nodes"].is_string()) job.hostname = j["nodes"];
  if (auto rc = Number(j.value("restart_cnt", Json()))) job.restarts = static_cast<int>(*rc);
  if (j.contains("exit_code")) {
    const Json& ec = j["exit_code"];
    // 22.05: the raw wait status (exit 3 -> 768); 23.x+: {"status", "return_code": {number}}.
    if (auto raw = Number(ec)) {
      job.exit_code = static_cast<int>(*raw >> 8);
    } else if (ec.is_object() && ec.contains("return_code")) {
      if (auto rc = Number(ec["return_code"])) job.exit_code = static_cast<int>(*rc);
    }
  }
  jobs.push_back(std::move(job));
}

Result<std::vector<SlurmJob>> ParseSacct(std::string_view text) {
  std::vector<SlurmJob> out;
  std::vector<std::string> header;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string line(text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
    start = nl == std::string_view::npos ? text.size() : nl + 1;
    if (line.empty()) continue;
    std::vector<std::string> cols;
    size_t b = 0;
    while (true) {
      size_t bar = line.find('|', b);
      cols.push_back(line.substr(b, bar == std::string::npos ? std::string::npos : bar - b));
      if (bar == std::string::npos) break;
      b = bar + 1;
    }
    if (header.empty()) {
      header = cols;
      continue;
    }
    auto col = [&](std::string_view name) -> std::string {
      for (size_t i = 0; i < header.size() && i < cols.size(); ++i) {
        if (header[i] == name) return cols[i];
      }
      return "";
    };
    std::string id = col("JobID");
    if (id.empty() || id.find('.') != std::string::npos) continue;  // steps: 27.batch, 29+0.0
    SlurmJob job;
    size_t plus = id.find('+');
    job.job_id = id.substr(0, plus);
    if (plus != std::string::npos) job.component = id.substr(plus + 1);
    job.name = col("JobName");
    job.state = col("State");
    job.hostname = col("NodeList");
    std::string ec = col("ExitCode");  // "3:0" = exit code 3, signal 0
    if (!ec.empty()) {
      try {
        job.exit_code = std::stoi(ec.substr(0, ec.find(':')));
      } catch (...) {
      }
    }
    out.push_back(std::move(job));
  }
  if (header.empty()) return InvalidArgumentError("sacct: no header line");
  return out;
}

std::optional<DescribeAppResponse> DescribeFromJobs(const std::string& app_id, const std::vector<SlurmJob>& jobs) {
  std::vector<const SlurmJob*> mine;
  for (const SlurmJob& j : jobs) {
    if (j.job_id == app_id) mine.push_back(&j);
  }
  if (mine.empty()) return std::nullopt;
  DescribeAppResponse d;
  d.app_id = app_id;
  d.state = AppState::kSucceeded;
  d.num_restarts = 0;
  std::map<std::string, std::vector<specs::ReplicaStatus>> roles;
  std::vector<std::string> order;
  for (const SlurmJob* j : mine) {
    AppState s = SlurmStateToAppState(j->state);
    if (Rank(s) > Rank(d.state)) d.state = s;
    d.num_restarts = std::max(d.num_restarts, j->restarts);
    std::string role = j->name;
    int replica = 0;
    if (size_t dash = j->name.rfind('-'); dash != std::string::npos) {
      role = j->name.substr(0, dash);
      try {
        replica = std::stoi(j->name.substr(dash + 1));
      } catch (...) {
        role = j->name;
      }
    }
    if (!roles.count(role)) order.push_back(role);
    specs::ReplicaStatus r;
    r.id = replica;
    r.role = role;
    r.state = s;
    r.hostname = j->hostname;
    roles[role].push_back(r);
  }
  // Running while any replica is running, even if another already failed (the app ends soon).
  for (const auto& role : order) {
    auto& reps = roles[role];
    std::sort(reps.begin(), reps.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    d.roles_statuses.push_back({role, reps});
  }
  if (d.state == AppState::kFailed) {
    for (const SlurmJob* j : mine) {
      if (j->exit_code && *j->exit_code != 0) {
        d.msg = fmt::format("{} exited with code {}", j->name, *j->exit_code);
        break;
      }
    }
  }
  return d;
}

}  // namespace torchx::schedulers::slurm
