#include "schedulers/slurm/queue_reader.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include <fmt/format.h>

namespace torchx::schedulers::slurm {
namespace {

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// A Slurm job id as an app id: `12`, an array task `12_3` or a het component `12+1`. Anything else
// is no job (and must not reach a batched sacct, which one bad id fails whole).
bool IsJobId(std::string_view id) {
  size_t digits = 0;
  while (digits < id.size() && id[digits] >= '0' && id[digits] <= '9') ++digits;
  if (digits == 0 || digits > 18) return false;
  if (digits == id.size()) return true;
  if (id[digits] != '_' && id[digits] != '+') return false;
  std::string_view rest = id.substr(digits + 1);
  return !rest.empty() && rest.size() <= 9 &&
         std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; });
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
  JobRows out;
  if (!IsJobId(app_id)) return out;  // no such job: nothing to ask
  followed_.insert(app_id);
  TORCHX_RETURN_IF_ERROR(Current(app_id, store_->TouchedAt(SubmittedId(app_id))));
  if (current_->error) {
    out.controller_error = current_->error;
  } else if (auto it = by_app_.find(app_id); it != by_app_.end()) {
    answered_from_[app_id] = current_->taken_at;
    out.source = JobRows::Source::kQueue;
    out.jobs = it->second;
    return out;
  }
  // Gone from the queue (ended more than MinJobAge ago), not yet in it, or the queue cannot be
  // read: accounting, asked once per refresh for every such job the reader follows.
  bool asked = accounted_for_ == current_->taken_at && accounted_.contains(app_id);
  if (!ended_.contains(app_id) && !asked) AskAccounting();
  if (auto it = ended_.find(app_id); it != ended_.end()) {
    out.source = JobRows::Source::kAccounting;
    out.jobs = it->second;
    return out;
  }
  auto lagging = accounted_.find(app_id);
  if (out.controller_error) {
    // The controller cannot say: accounting's live state, which may lag, and the note says so.
    if (lagging != accounted_.end() && !lagging->second.empty()) {
      out.source = JobRows::Source::kAccounting;
      out.jobs = lagging->second;
    }
    return out;
  }
  // Neither has it ended: another user's job (the snapshot is the user's own), one submitted
  // from another host since the snapshot, or no job at all. The queue is asked about it alone.
  TORCHX_ASSIGN_OR_RETURN(
      auto alone, Tool({"squeue", "-h", "-a", "-r", "-t", "all", "-j", app_id, "-O", std::string(kSnapshotFormat)}));
  if (alone.exit_code != 0) {
    if (alone.err.find("Invalid job id") == std::string::npos) out.controller_error = Trim(alone.err);
  } else {
    for (SlurmJob& job : ParseSnapshotRows(alone.out)) {
      if (job.job_id == app_id) out.jobs.push_back(std::move(job));
    }
    if (out.jobs.empty() && alone.out.find_first_not_of(" \n") != std::string::npos) {
      return InvalidArgumentError(fmt::format("squeue: cannot read the rows of job {}: {}", app_id, Trim(alone.out)));
    }
    if (!out.jobs.empty()) {
      out.source = JobRows::Source::kQueue;
      return out;
    }
  }
  if (lagging != accounted_.end() && !lagging->second.empty()) {  // accounting's, where the queue has none
    out.source = JobRows::Source::kAccounting;
    out.jobs = lagging->second;
  }
  return out;
}

Result<std::vector<SlurmJob>> QueueReader::QueueJobs() {
  TORCHX_RETURN_IF_ERROR(Current("", store_->LastTouch()));
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

Result<std::optional<std::vector<SlurmJob>>> QueueReader::AccountedJobs() {
  bool held = accounting_ && SnapshotServes({accounting_->taken_at, accounting_->answered_at, clock_->EpochSeconds(),
                                             interval_, std::nullopt, std::nullopt});
  if (!held) {
    accounting_ = SharedFor(SnapshotKind::kAccounting, interval_, [&] {
      return Take({"sacct", "--parsable2", "-X", "-S", "1970-01-01T00:00:01", "-o",
                   "JobID,JobName,State,ExitCode,NodeList,Submit"});
    });
  }
  if (accounting_->error) return std::optional<std::vector<SlurmJob>>();
  TORCHX_ASSIGN_OR_RETURN(auto rows, ParseSacct(accounting_->rows));
  return std::optional(std::move(rows));
}

Status QueueReader::Current(const std::string& app_id, std::optional<double> touched) {
  std::optional<double> answered;
  if (auto it = answered_from_.find(app_id); !app_id.empty() && it != answered_from_.end()) answered = it->second;
  auto serves = [&](const QueueSnapshot& s) {
    return SnapshotServes({s.taken_at, s.answered_at, clock_->EpochSeconds(), interval_, touched, answered});
  };
  if (current_ && serves(*current_)) return OkStatus();
  return Adopt(Shared(SnapshotKind::kQueue, serves, [&] {
    return Take({"squeue", "--me", "-h", "-a", "-r", "-t", "all", "-O", std::string(kSnapshotFormat)});
  }));
}

QueueSnapshot QueueReader::SharedFor(SnapshotKind kind, double max_age, const std::function<QueueSnapshot()>& take) {
  return Shared(
      kind,
      [&](const QueueSnapshot& s) {
        return SnapshotServes({s.taken_at, s.answered_at, clock_->EpochSeconds(), max_age, std::nullopt, std::nullopt});
      },
      take);
}

QueueSnapshot QueueReader::Shared(SnapshotKind kind, const std::function<bool(const QueueSnapshot&)>& serves,
                                  const std::function<QueueSnapshot()>& take) {
  if (auto stored = store_->Read(kind); stored && serves(*stored)) return std::move(*stored);
  // Under the lock, the store is read again: whoever held it may have just refreshed it.
  QueueSnapshot out;
  Status locked = store_->Locked([&]() -> Status {
    if (auto stored = store_->Read(kind); stored && serves(*stored)) {
      out = std::move(*stored);
      return OkStatus();
    }
    out = take();
    if (out.shared) (void)store_->Write(kind, out);  // one that cannot be written still answers here
    return OkStatus();
  });
  if (!locked.ok()) out = take();  // a lock that cannot be had: asked alone
  return out;
}

QueueSnapshot QueueReader::Take(const std::vector<std::string>& argv) {
  QueueSnapshot s;
  s.taken_at = clock_->EpochSeconds();
  auto res = Tool(argv);
  s.answered_at = clock_->EpochSeconds();
  if (!res) {
    s.error = res.error().message();
    s.shared = false;  // not found on this process's PATH, timed out: this process's alone
    // Stopped because its caller left: an answer for nobody, which serves no later ask either.
    if (res.error().code() == StatusCode::kCancelled) s.taken_at = s.answered_at = 0;
  } else if (res->exit_code != 0) {
    s.error = Trim(res->err);
    if (s.error->empty()) s.error = fmt::format("exit {}", res->exit_code);
    // An exit the tool chose is the cluster's answer; a signal's is this process's.
    s.shared = res->exit_code > 0 && res->exit_code < 128;
  } else {
    s.rows = std::move(res->out);
  }
  return s;
}

Status QueueReader::Adopt(QueueSnapshot snapshot) {
  std::unordered_map<std::string, std::vector<SlurmJob>> by_app;
  if (!snapshot.error) {
    for (SlurmJob& job : ParseSnapshotRows(snapshot.rows)) by_app[job.job_id].push_back(std::move(job));
  }
  snapshot.rows.clear();  // parsed into by_app_: the text is not kept twice
  by_app_ = std::move(by_app);
  current_ = std::move(snapshot);
  return OkStatus();
}

void QueueReader::AskAccounting() {
  // A new refresh asks again about every followed job the queue lacks; within one, only those
  // not asked yet (a reader meeting its jobs one by one asks each once, not all again).
  if (accounted_for_ != current_->taken_at) {
    accounted_.clear();
    accounted_for_ = current_->taken_at;
  }
  std::vector<std::string> ids;
  for (const std::string& id : followed_) {
    if (ended_.contains(id) || accounted_.contains(id)) continue;
    if (!current_->error && by_app_.contains(id)) continue;
    ids.push_back(id);
    accounted_[id];  // asked this refresh, whatever the answer
  }
  // sacct takes the ids as one argument: kept well under the kernel's 128 KiB for one.
  constexpr size_t kIdsPerCall = 2000;
  for (size_t from = 0; from < ids.size(); from += kIdsPerCall) {
    size_t to = std::min(ids.size(), from + kIdsPerCall);
    std::vector<std::string> batch(ids.begin() + static_cast<std::ptrdiff_t>(from),
                                   ids.begin() + static_cast<std::ptrdiff_t>(to));
    auto res = Tool({"sacct", "--parsable2", "-j", fmt::format("{}", fmt::join(batch, ",")), "-o",
                     "JobID,JobName,State,ExitCode,NodeList"});
    if (!res || res->exit_code != 0) return;  // no accounting on this cluster, or it is down
    auto rows = ParseSacct(res->out);
    if (!rows) return;
    for (SlurmJob& job : *rows) {
      if (auto it = accounted_.find(job.job_id); it != accounted_.end()) it->second.push_back(std::move(job));
    }
    for (const std::string& id : batch) {
      const std::vector<SlurmJob>& answer = accounted_[id];
      auto d = DescribeFromJobs(id, answer);
      // A job the controller has forgotten cannot change again: its end is final.
      if (d && specs::IsTerminal(d->state) && !current_->error) ended_[id] = answer;
      // One nobody knows is not asked again with the others until someone asks about it again.
      if (!d) followed_.erase(id);
    }
  }
}

}  // namespace torchx::schedulers::slurm
