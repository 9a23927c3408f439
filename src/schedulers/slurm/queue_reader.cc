#include "schedulers/slurm/queue_reader.h"

#include <chrono>
#include <utility>

#include <fmt/format.h>

namespace torchx::schedulers::slurm {
namespace {

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

QueueReader::QueueReader(std::shared_ptr<internal::CommandRunner> tools, std::shared_ptr<SnapshotStore> store,
                         std::shared_ptr<const Clock> clock, double interval)
    : tools_(std::move(tools)), store_(std::move(store)), clock_(std::move(clock)), interval_(interval) {}

Result<internal::CommandResult> QueueReader::Tool(const std::vector<std::string>& argv) {
  auto res = tools_->Run(argv, "", std::chrono::seconds(60));
  if (!res && res.error().code() == StatusCode::kNotFound) {
    return UnavailableError(fmt::format("slurm: {} (is this a Slurm login node?)", res.error().message()));
  }
  return res;
}

Result<JobRows> QueueReader::Rows(const std::string& app_id) {
  followed_.insert(app_id);
  TORCHX_RETURN_IF_ERROR(Current(app_id));
  JobRows out;
  if (current_->error) {
    out.controller_error = current_->error;
  } else if (auto it = by_app_.find(app_id); it != by_app_.end()) {
    answered_from_[app_id] = current_->taken_at;
    out.source = JobRows::Source::kQueue;
    out.jobs = it->second;
    return out;
  }
  // Gone from the queue (ended more than MinJobAge ago), not yet in it, or the queue cannot be
  // read: accounting, asked once per refresh for every such job.
  if (!ended_.contains(app_id) && (accounted_for_ != current_->taken_at || !accounted_.contains(app_id))) {
    AskAccounting();
  }
  for (auto* known : {&ended_, &accounted_}) {
    if (auto it = known->find(app_id); it != known->end() && !it->second.empty()) {
      out.source = JobRows::Source::kAccounting;
      out.jobs = it->second;
      return out;
    }
  }
  if (out.controller_error) return out;
  // Neither knows it: another user's job (the snapshot is the user's own), one submitted from
  // another host since the snapshot, or no job at all. Asked alone, as before batching.
  TORCHX_ASSIGN_OR_RETURN(
      auto alone, Tool({"squeue", "-h", "-a", "-r", "-t", "all", "-j", app_id, "-O", std::string(kSnapshotFormat)}));
  if (alone.exit_code != 0) {
    if (alone.err.find("Invalid job id") == std::string::npos) out.controller_error = Trim(alone.err);
    return out;
  }
  TORCHX_ASSIGN_OR_RETURN(auto rows, ParseSnapshotRows(alone.out));
  for (SlurmJob& job : rows) {
    if (job.job_id == app_id) out.jobs.push_back(std::move(job));
  }
  if (!out.jobs.empty()) out.source = JobRows::Source::kQueue;
  return out;
}

Result<std::vector<SlurmJob>> QueueReader::QueueJobs() {
  TORCHX_RETURN_IF_ERROR(Current(""));
  if (current_->error) return UnavailableError(fmt::format("slurm: squeue: {}", *current_->error));
  std::vector<SlurmJob> all;
  for (const auto& [app, rows] : by_app_) all.insert(all.end(), rows.begin(), rows.end());
  return all;
}

void QueueReader::Touched(const std::string& app_id) {
  std::string job = SubmittedId(app_id);
  store_->Touch(job, clock_->EpochSeconds());
  // Its ended rows no longer hold once it is submitted again under the same id (a requeue).
  std::erase_if(ended_, [&](const auto& entry) { return SubmittedId(entry.first) == job; });
}

Status QueueReader::Current(const std::string& app_id) {
  std::optional<double> touched;
  std::optional<double> answered;
  if (!app_id.empty()) {
    touched = store_->TouchedAt(SubmittedId(app_id));
    if (auto it = answered_from_.find(app_id); it != answered_from_.end()) answered = it->second;
  }
  auto serves = [&](const std::optional<QueueSnapshot>& s) {
    return s && SnapshotServes({s->taken_at, clock_->EpochSeconds(), interval_, touched, answered});
  };
  if (serves(current_)) return OkStatus();
  if (auto stored = store_->Read(); serves(stored)) return Adopt(std::move(*stored));
  // Under the lock, the store is read again: whoever held it may have just refreshed it.
  return store_->Locked([&]() -> Status {
    if (auto stored = store_->Read(); serves(stored)) return Adopt(std::move(*stored));
    QueueSnapshot fresh = Take();
    (void)store_->Write(fresh);  // a store that cannot be written still answers this process
    return Adopt(std::move(fresh));
  });
}

QueueSnapshot QueueReader::Take() {
  QueueSnapshot s;
  s.taken_at = clock_->EpochSeconds();
  auto res = Tool({"squeue", "--me", "-h", "-a", "-r", "-t", "all", "-O", std::string(kSnapshotFormat)});
  if (!res) {
    s.error = res.error().message();
  } else if (res->exit_code != 0) {
    s.error = Trim(res->err);
    if (s.error->empty()) s.error = fmt::format("exit {}", res->exit_code);
  } else {
    s.rows = std::move(res->out);
  }
  return s;
}

Status QueueReader::Adopt(QueueSnapshot snapshot) {
  std::unordered_map<std::string, std::vector<SlurmJob>> by_app;
  if (!snapshot.error) {
    TORCHX_ASSIGN_OR_RETURN(auto rows, ParseSnapshotRows(snapshot.rows));
    for (SlurmJob& job : rows) by_app[job.job_id].push_back(std::move(job));
  }
  snapshot.rows.clear();  // parsed into by_app_: the text is not kept twice
  by_app_ = std::move(by_app);
  current_ = std::move(snapshot);
  return OkStatus();
}

void QueueReader::AskAccounting() {
  std::vector<std::string> ids;
  for (const std::string& id : followed_) {
    if (ended_.contains(id)) continue;
    if (!current_->error && by_app_.contains(id)) continue;
    ids.push_back(id);
  }
  accounted_.clear();
  accounted_for_ = current_->taken_at;
  for (const std::string& id : ids) accounted_[id];  // asked this refresh, whatever the answer
  if (ids.empty()) return;
  auto res = Tool({"sacct", "--parsable2", "-j", fmt::format("{}", fmt::join(ids, ",")), "-o",
                   "JobID,JobName,State,ExitCode,NodeList"});
  if (!res || res->exit_code != 0) return;  // no accounting on this cluster, or it is down
  auto rows = ParseSacct(res->out);
  if (!rows) return;
  for (SlurmJob& job : *rows) {
    if (auto it = accounted_.find(job.job_id); it != accounted_.end()) it->second.push_back(std::move(job));
  }
  for (auto it = accounted_.begin(); it != accounted_.end(); ++it) {
    auto d = DescribeFromJobs(it->first, it->second);
    // A job the controller has forgotten cannot change again: its state is final.
    if (d && specs::IsTerminal(d->state) && !current_->error) ended_[it->first] = it->second;
    // One nobody knows is not asked again with the others until someone asks about it again.
    if (!d) followed_.erase(it->first);
  }
}

}  // namespace torchx::schedulers::slurm
