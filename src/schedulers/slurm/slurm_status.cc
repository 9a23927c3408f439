#include "schedulers/slurm/slurm_status.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "core/strings.h"

namespace torchx::schedulers::slurm {
namespace {

using specs::AppState;

int Rank(AppState s) {
  switch (s) {
    case AppState::kFailed:
      return 6;
    case AppState::kCancelled:
      return 5;
    case AppState::kUnknown:
      return 4;
    case AppState::kRunning:
      return 3;
    case AppState::kPending:
      return 2;
    case AppState::kSubmitted:
      return 1;
    default:
      return 0;  // SUCCEEDED, UNSUBMITTED
  }
}

}  // namespace

const std::map<std::string, AppState, std::less<>>& SlurmStates() {
  static const auto* kStates = new std::map<std::string, AppState, std::less<>>{
      {"COMPLETED", AppState::kSucceeded}, {"CANCELLED", AppState::kCancelled}, {"PENDING", AppState::kPending},
      {"REQUEUED", AppState::kPending},    {"REQUEUE_FED", AppState::kPending}, {"REQUEUE_HOLD", AppState::kPending},
      {"RESIZING", AppState::kPending},    {"SUSPENDED", AppState::kPending},   {"CONFIGURING", AppState::kPending},
      {"RUNNING", AppState::kRunning},     {"COMPLETING", AppState::kRunning},  {"STAGE_OUT", AppState::kRunning},
      {"SIGNALING", AppState::kRunning},   {"BOOT_FAIL", AppState::kFailed},    {"DEADLINE", AppState::kFailed},
      {"FAILED", AppState::kFailed},       {"NODE_FAIL", AppState::kFailed},    {"OUT_OF_MEMORY", AppState::kFailed},
      {"PREEMPTED", AppState::kFailed},    {"REVOKED", AppState::kFailed},      {"TIMEOUT", AppState::kFailed},
      {"SPECIAL_EXIT", AppState::kFailed},
  };
  return *kStates;
}

specs::AppState SlurmStateToAppState(std::string_view state_in) {
  std::string state(state_in.substr(0, state_in.find(' ')));
  while (!state.empty() && state.back() == '+') state.pop_back();
  auto it = SlurmStates().find(state);
  return it == SlurmStates().end() ? AppState::kUnknown : it->second;
}

namespace {

// The value of a numeric squeue column, or nullopt for "N/A", "" and anything else.
std::optional<long long> Integer(std::string_view text) {
  long long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

}  // namespace

std::pair<std::string, int> RoleAndReplica(const std::string& name) {
  size_t dash = name.rfind('-');
  if (dash == std::string::npos) return {name, 0};
  auto replica = Integer(std::string_view(name).substr(dash + 1));
  if (!replica || *replica < 0 || *replica > std::numeric_limits<int>::max()) return {name, 0};
  return {name.substr(0, dash), static_cast<int>(*replica)};
}

std::optional<double> SlurmTime(std::string_view text) {
  if (text.size() != 19) return std::nullopt;  // "Unknown", "N/A", "None"
  std::string s(text);
  std::tm tm{};
  tm.tm_isdst = -1;
  const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end || *end != '\0') return std::nullopt;
  std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<double>(t);
}

Result<std::vector<SlurmJob>> ParseSqueueRows(std::string_view text) {
  std::vector<SlurmJob> jobs;
  constexpr size_t kFixed = 8;  // the columns before Name, in kSqueueFormat's order
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    start = nl == std::string_view::npos ? text.size() : nl + 1;
    if (line.empty()) continue;
    std::string_view cols[kFixed];
    size_t at = 0;
    for (size_t i = 0; i < kFixed; ++i) {
      size_t bar = line.find('|', at);
      if (bar == std::string_view::npos) {
        return InvalidArgumentError(fmt::format("squeue: expected {} '|'-ended columns, got: {}", kFixed + 1, line));
      }
      cols[i] = line.substr(at, bar - at);
      at = bar + 1;
    }
    std::string_view name = line.substr(at);  // Name is last: it alone may hold a '|'
    if (!name.empty() && name.back() == '|') name.remove_suffix(1);
    auto id = Integer(cols[0]);
    if (!id) return InvalidArgumentError(fmt::format("squeue: not a job id: {}", cols[0]));
    SlurmJob job;
    job.raw_id = std::to_string(*id);
    auto het = Integer(cols[1]);  // "N/A" (22.05) or 0 for a plain job
    if (het && *het > 0) {
      job.job_id = std::to_string(*het);
      job.component = std::to_string(Integer(cols[2]).value_or(*id - *het));
    } else {
      job.job_id = std::to_string(*id);
    }
    job.state = std::string(cols[3]);
    if (cols[4] != "N/A" && cols[4] != "n/a") job.hostname = std::string(cols[4]);
    job.restarts = static_cast<int>(Integer(cols[5]).value_or(0));
    // The raw wait status (exit 3 -> 768), as Slurm keeps it; NO_VAL while the job has none.
    if (auto raw = Integer(cols[6]); raw && *raw >= 0 && *raw <= 0xffff) job.exit_code = static_cast<int>(*raw >> 8);
    job.submitted = SlurmTime(cols[7]);
    job.name = std::string(name);
    jobs.push_back(std::move(job));
  }
  return jobs;
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
    // Steps (27.batch, 29+0.0) are not jobs; nor is a row without a job id (found by fuzzing).
    if (id.empty() || id[0] < '0' || id[0] > '9' || id.find('.') != std::string::npos) continue;
    SlurmJob job;
    size_t plus = id.find('+');
    job.job_id = id.substr(0, plus);
    if (plus != std::string::npos) job.component = id.substr(plus + 1);
    job.name = col("JobName");
    job.state = col("State");
    job.submitted = SlurmTime(col("Submit"));
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
    auto [role, replica] = RoleAndReplica(j->name);
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

Result<std::vector<std::pair<std::string, std::string>>> ParseScontrolJob(std::string_view text) {
  std::string_view line = text.substr(0, text.find('\n'));
  std::vector<std::pair<std::string, std::string>> fields;
  size_t pos = 0;
  while (pos < line.size()) {
    size_t end = line.find(' ', pos);
    if (end == std::string_view::npos) end = line.size();
    std::string_view token = line.substr(pos, end - pos);
    pos = end + 1;
    if (token.empty()) continue;
    size_t eq = token.find('=');
    // A key is letters, digits and ':' / '/' (TRES=cpu=1 keeps the rest in the value).
    bool keyed = eq != std::string_view::npos && eq > 0 &&
                 std::all_of(token.begin(), token.begin() + static_cast<std::ptrdiff_t>(eq), [](char c) {
                   return std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '/' || c == '_';
                 });
    if (keyed) {
      fields.emplace_back(std::string(token.substr(0, eq)), std::string(token.substr(eq + 1)));
    } else if (!fields.empty()) {
      fields.back().second += " " + std::string(token);
    }
  }
  if (std::none_of(fields.begin(), fields.end(), [](const auto& f) { return f.first == "JobId"; })) {
    return InvalidArgumentError(fmt::format("scontrol show job: no JobId in '{}'", line.substr(0, 200)));
  }
  return fields;
}

std::optional<FailureReport> ClassifySlurmJobs(const std::vector<SlurmJob>& components) {
  struct Row {
    std::string_view state;
    FailureCause cause;
    std::string_view words;
  };
  // Gravest first: a node that failed under one component explains the others' ends.
  static constexpr Row kTable[] = {
      {"NODE_FAIL", FailureCause::kNodeFailure, "a node it ran on failed"},
      {"BOOT_FAIL", FailureCause::kNodeFailure, "its node could not boot"},
      {"PREEMPTED", FailureCause::kPreemption, "preempted by a higher-priority job"},
      {"TIMEOUT", FailureCause::kTimeLimit, "it ran past its time limit"},
      {"DEADLINE", FailureCause::kTimeLimit, "it reached its deadline"},
      {"REVOKED", FailureCause::kEngineLost, "revoked by its federation"},
      {"OUT_OF_MEMORY", FailureCause::kOutOfMemory, "it ran out of memory"},
      {"FAILED", FailureCause::kUserError, "it exited non-zero"},
      {"SPECIAL_EXIT", FailureCause::kUserError, "it exited with a special exit code"},
      {"CANCELLED", FailureCause::kCancelled, "cancelled"},
  };
  for (const Row& row : kTable) {
    for (const SlurmJob& c : components) {
      std::string_view state(c.state);
      state = state.substr(0, state.find(' '));
      while (!state.empty() && state.back() == '+') state.remove_suffix(1);
      if (state != row.state) continue;
      std::string where = c.name.empty() ? "" : fmt::format(" ({}", c.name);
      if (!where.empty()) {
        if (!c.hostname.empty() && row.cause == FailureCause::kNodeFailure) where += " on " + c.hostname;
        if (c.exit_code && *c.exit_code != 0 && row.cause == FailureCause::kUserError) {
          where += fmt::format(", exit code {}", *c.exit_code);
        }
        where += ")";
      }
      return FailureReport{row.cause, fmt::format("slurm job {}: {} ({}){}", c.job_id, row.words, state, where)};
    }
  }
  return std::nullopt;
}

}  // namespace torchx::schedulers::slurm
