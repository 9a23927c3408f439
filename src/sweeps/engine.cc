#include "sweeps/engine.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "composite/child_ops.h"
#include "composite/children.h"
#include "core/spelling.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/serialize.h"

namespace torchx::sweeps {
namespace {

using specs::AppState;

bool IsFinal(const TrialRecord& t) { return composite::IsFinal(t.phase); }
bool Runs(const TrialRecord& t) { return t.phase == ChildPhase::kSubmitting || t.phase == ChildPhase::kSubmitted; }

// A trial that ended other than SUCCEEDED, not by the sweep's own cancel.
bool Failed(const SweepRecord& r, const TrialRecord& t) {
  return t.phase == ChildPhase::kDone && t.state != AppState::kSucceeded &&
         !(r.cancel_requested && t.state == AppState::kCancelled);
}

std::string ValuesText(const Assignment& values) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : values) parts.push_back(k + "=" + ValueText(v));
  return fmt::format("{}", fmt::join(parts, ", "));
}

void Finish(SweepRecord& r) {
  if (r.final_state) return;
  if (!std::all_of(r.trials.begin(), r.trials.end(), IsFinal)) return;
  std::vector<std::string> failed;
  bool skipped = false;
  for (const TrialRecord& t : r.trials) {
    if (Failed(r, t)) failed.push_back(std::to_string(t.index));
    skipped = skipped || t.phase == ChildPhase::kSkipped;
  }
  const TrialRecord* best = BestTrial(r);
  std::string best_text = best && r.objective
                              ? fmt::format("best trial {} ({}): {}={}", best->index, ValuesText(best->values),
                                            r.objective->metric, *best->objective)
                              : "";
  // A sweep whose trials never reported its objective has no result, however they ended.
  std::optional<std::string> unreported = UnreportedObjective(r, true);
  if (r.cancel_requested) {
    r.final_state = AppState::kCancelled;
    r.msg = "cancelled";
  } else if (!failed.empty() || skipped) {
    r.final_state = AppState::kFailed;
    std::string not_run = "trials did not run";
    auto skipped_count = std::count_if(r.trials.begin(), r.trials.end(),
                                       [](const TrialRecord& x) { return x.phase == ChildPhase::kSkipped; });
    for (const TrialRecord& t : r.trials) {  // why: the first reason given
      if (t.phase == ChildPhase::kSkipped && !t.msg.empty()) {
        not_run = fmt::format("{} trial{} did not run ({})", skipped_count, skipped_count > 1 ? "s" : "", t.msg);
        break;
      }
    }
    r.msg = failed.empty()
                ? not_run
                : fmt::format("{} of {} trials failed ({}{})", failed.size(), r.trials.size(),
                              fmt::join(failed.begin(), failed.begin() + std::min<size_t>(failed.size(), 10), ", "),
                              failed.size() > 10 ? ", ..." : "");
    if (skipped && !failed.empty() && r.max_failures > 0 && static_cast<int>(failed.size()) >= r.max_failures) {
      r.msg += fmt::format("; stopped early (max_failures {})", r.max_failures);
    }
    if (unreported) r.msg += "; " + *unreported;
  } else if (unreported) {
    r.final_state = AppState::kFailed;
    r.msg = *unreported;
  } else {
    r.final_state = AppState::kSucceeded;
    r.msg = "";
  }
  if (!best_text.empty()) r.msg = r.msg.empty() ? best_text : r.msg + "; " + best_text;
}

// Why no further trial starts, once `max_failures` trials failed.
std::optional<std::string> StopReason(const SweepRecord& r) {
  if (r.max_failures <= 0 || r.cancel_requested) return std::nullopt;
  auto failed = std::count_if(r.trials.begin(), r.trials.end(), [&r](const TrialRecord& t) { return Failed(r, t); });
  if (failed < r.max_failures) return std::nullopt;
  return fmt::format("the sweep stopped after {} failed trials (max_failures {})", failed, r.max_failures);
}

struct Seen {
  Result<std::optional<specs::AppStatus>> status;
  std::vector<Report> reports;
};

void Apply(SweepRecord& r, const std::map<int, Seen>& seen) {
  double now = composite::EpochNow();
  for (size_t i = 0; i < r.trials.size(); ++i) {
    auto it = seen.find(r.trials[i].index);
    if (r.trials[i].phase != ChildPhase::kSubmitted || it == seen.end()) continue;
    TrialRecord& t = r.trials.Mut(i);
    Summary summary = Summarize(it->second.reports, r.objective);
    if (!summary.metrics.empty()) {
      t.metrics = std::move(summary.metrics);
      t.objective = summary.objective;
    }
    composite::ApplyChildStatus(t, it->second.status, now);
  }
  // Stop early: once `max_failures` trials failed, what has not started never will.
  if (auto why = StopReason(r)) {
    AbandonWaiting(r, *why);
    return;
  }
  Finish(r);
}

// After a change to the trials: the early stop, or the sweep's end once every trial is final.
void Settle(SweepRecord& r) { Apply(r, {}); }

// Submitted trials that have not started (an array's waiting tasks, a job in a queue).
bool Queued(const TrialRecord& t) {
  return t.phase == ChildPhase::kSubmitted && (t.state == AppState::kSubmitted || t.state == AppState::kPending);
}

bool Claimable(const SweepRecord& r, const TrialRecord& t) {
  return t.phase == ChildPhase::kWaiting && !(r.space.type == SpaceType::kAx && t.values.empty());
}

// Plans up to `n` waiting trials (index order; each built and dry-run outside the lock), then
// claims them under the lock with the handles their dry runs chose. A trial that cannot be
// built or dry-run fails here, as its submission would have.
// Plans up to `n` claimable trials of `r`, then claims them; `r` becomes the record as written
// (it is let go of meanwhile: a 10,000-trial record is MiBs, and the store holds its own copy).
Result<std::map<size_t, composite::ChildPlan>> Claim(SweepStore& store, const std::string& id, TrialBackend& backend,
                                                     SweepRecord& r, int n) {
  std::map<size_t, Result<composite::ChildPlan>> plans;
  for (size_t i = 0; i < r.trials.size() && static_cast<int>(plans.size()) < n; ++i) {
    if (Claimable(r, r.trials[i])) plans.emplace(i, backend.Plan(r, r.trials[i]));
  }
  r = SweepRecord();
  return composite::ClaimChildren(store, id, &SweepRecord::trials, std::move(plans), Claimable, Settle, r);
}

// The most a driver claims at once: each batch is two writes of the record, whatever its size.
constexpr int kBatch = 32;

// Of the trials queued on their scheduler (an array's waiting tasks), how many a refresh asks
// about: the scheduler starts them in order, so the first ones move first, and a 1,000-task
// array does not cost 1,000 status calls (squeue processes) per turn of the driver.
constexpr int kQueuedAsked = 16;

// An ax sweep: values for the next trials, from Ax, when slots are free and no proposed trial
// waits. Ax not answering (not installed, an error) leaves the rest not run, with its reason.
Result<SweepRecord> ProposeTrials(SweepStore& store, const std::string& id, TrialBackend& backend, SweepRecord r,
                                  int slots) {
  int unvalued = 0, proposed_waiting = 0;
  for (const TrialRecord& t : r.trials) {
    if (t.phase != ChildPhase::kWaiting) continue;
    (t.values.empty() ? unvalued : proposed_waiting)++;
  }
  int want = std::min(slots - proposed_waiting, unvalued);
  int ended = static_cast<int>(std::count_if(r.trials.begin(), r.trials.end(), IsFinal));
  if (want <= 0 || StopReason(r) || ended == r.ax_short_at) return r;  // Ax still waits for data
  auto proposals = backend.Propose(r, want);
  bool running = std::any_of(r.trials.begin(), r.trials.end(), Runs);
  return store.Update(id, [&](SweepRecord& cur) {
    if (!proposals) {
      AbandonWaiting(cur, "Ax cannot propose trials: " + proposals.error().message());
      return OkStatus();
    }
    size_t next = 0;
    for (size_t i = 0; i < cur.trials.size(); ++i) {  // in index order: the lowest waiting trials get values
      if (next == proposals->size()) break;
      if (cur.trials[i].phase != ChildPhase::kWaiting || !cur.trials[i].values.empty()) continue;
      TrialRecord& t = cur.trials.Mut(i);
      Proposal& p = (*proposals)[next++];
      t.values = std::move(p.values);
      t.generator = std::move(p.generator);
      t.ax_index = p.index;
    }
    cur.ax_short_at = static_cast<int>(proposals->size()) < want ? ended : -1;
    if (next == 0 && !running) AbandonWaiting(cur, "Ax proposed no further trial");
    return OkStatus();
  });
}

}  // namespace

Result<std::vector<Proposal>> TrialBackend::Propose(const SweepRecord&, int) {
  return UnimplementedError("this sweep's trials are not proposed by Ax");
}

std::string SweepHandle(const SweepRecord& r) {
  return specs::MakeAppHandle(std::string(kSchedulerName), r.session, r.id);
}

const TrialRecord* BestTrial(const SweepRecord& r) {
  if (!r.objective) return nullptr;
  const TrialRecord* best = nullptr;
  auto rank = [](const TrialRecord& t) { return t.state == AppState::kSucceeded ? 0 : 1; };
  for (const TrialRecord& t : r.trials) {
    if (!t.objective) continue;
    if (!best || rank(t) < rank(*best) ||
        (rank(t) == rank(*best) && Better(*t.objective, *best->objective, *r.objective))) {
      best = &t;
    }
  }
  return best;
}

std::optional<std::string> UnreportedObjective(const SweepRecord& r, bool ended) {
  if (!r.objective) return std::nullopt;
  std::vector<std::string> reported;
  for (const TrialRecord& t : r.trials) {
    if (t.objective) return std::nullopt;
    for (const auto& [name, _] : t.metrics) {
      if (std::find(reported.begin(), reported.end(), name) == reported.end()) reported.push_back(name);
    }
  }
  const std::string& metric = r.objective->metric;
  if (reported.empty()) {
    if (!ended) return std::nullopt;
    return fmt::format("objective `{}` not reported: no trial reported any metric", metric);
  }
  if (auto close = internal::SpellCheck(metric, reported)) {
    return fmt::format("objective `{}` not reported; did you mean `{}`?", metric, *close);
  }
  // No close name: perhaps reported only at the end (a validation metric), so "yet" while running.
  return fmt::format("objective `{}` not reported{}; the trials report {}", metric, ended ? "" : " yet",
                     fmt::join(reported, ", "));
}

Result<SweepRecord> Refresh(SweepStore& store, const std::string& id, TrialBackend& backend) {
  TORCHX_ASSIGN_OR_RETURN(auto current, store.Get(id));
  if (!current) return NotFoundError(fmt::format("sweep {} does not exist", id));
  if (current->final_state) return std::move(*current);
  // Ask the scheduler and read the reports outside the lock, then apply under it.
  std::vector<const TrialRecord*> asked;
  std::vector<std::string> handles;
  int queued = 0;
  for (const TrialRecord& t : current->trials) {
    if (t.phase != ChildPhase::kSubmitted) continue;
    if (Queued(t) && ++queued > kQueuedAsked) continue;  // their turn comes as the first ones start
    asked.push_back(&t);
    handles.push_back(t.handle);
  }
  // Their statuses in one call (a scheduler that answers many at once is asked once).
  std::vector<composite::ChildStatus> statuses = backend.Statuses(handles);
  std::map<int, Seen> seen;
  for (size_t i = 0; i < asked.size() && i < statuses.size(); ++i) {
    seen.emplace(asked[i]->index, Seen{std::move(statuses[i]), backend.Reports(*current, *asked[i])});
  }
  current.reset();  // the store has its own copy to update
  return store.Update(id, [&](SweepRecord& r) {
    Apply(r, seen);
    return OkStatus();
  });
}

Result<SweepRecord> Advance(SweepStore& store, const std::string& id, TrialBackend& backend) {
  TORCHX_ASSIGN_OR_RETURN(SweepRecord r, Refresh(store, id, backend));
  if (auto why = StopReason(r); why && std::any_of(r.trials.begin(), r.trials.end(), Queued)) {
    // Stopped early with trials still queued on the scheduler: they are cancelled before they
    // start (outside the lock: a cancel may take seconds), and marked not run once cancelled. A
    // cancel that failed leaves the trial to the next refresh.
    std::set<int> cancelled;
    for (const TrialRecord& t : r.trials) {
      if (Queued(t) && backend.Cancel(t.handle).ok()) cancelled.insert(t.index);
    }
    TORCHX_ASSIGN_OR_RETURN(r, store.Update(id, [&](SweepRecord& cur) {
      for (size_t i = 0; i < cur.trials.size(); ++i) {
        if (!cancelled.count(cur.trials[i].index) || cur.trials[i].phase != ChildPhase::kSubmitted) continue;
        TrialRecord& t = cur.trials.Mut(i);
        t.phase = ChildPhase::kSkipped;
        t.state = AppState::kCancelled;
        t.msg = "not run: " + *why;
      }
      Apply(cur, {});
      return OkStatus();
    }));
  }
  while (!r.final_state && !r.cancel_requested) {
    int running = static_cast<int>(std::count_if(r.trials.begin(), r.trials.end(), Runs));
    int slots = r.max_parallel > 0 ? r.max_parallel - running : kBatch;
    if (slots <= 0) break;
    if (r.space.type == SpaceType::kAx) {
      TORCHX_ASSIGN_OR_RETURN(r, ProposeTrials(store, id, backend, std::move(r), slots));
      if (r.final_state) break;
    }
    TORCHX_ASSIGN_OR_RETURN(auto claimed, Claim(store, id, backend, r, std::min(slots, kBatch)));
    if (claimed.empty()) return r;
    r = SweepRecord();  // SubmitClaimed answers the record as written
    TORCHX_ASSIGN_OR_RETURN(r, composite::SubmitClaimed(store, id, backend, &SweepRecord::trials, claimed, Settle));
  }
  return r;
}

Status ResolveClaims(SweepStore& store, const std::string& id, TrialBackend& backend, const std::string& why_unknown) {
  return composite::ResolveClaimsIn(
      store, id, backend, &SweepRecord::trials, [&why_unknown](const TrialRecord&) { return why_unknown; }, Settle);
}

void FailUnrecorded(SweepRecord& r, const std::string& why) {
  composite::FailClaimed(r.trials, [&why](const TrialRecord&) { return why; });
  Settle(r);
}

void AbandonWaiting(SweepRecord& r, const std::string& why) {
  composite::SkipWaiting(r.trials, why);
  Finish(r);
}

::torchx::Status CancelSweep(SweepStore& store, const std::string& id, TrialBackend& backend) {
  return composite::CancelComposite(store, id, backend, &SweepRecord::trials, "the sweep was cancelled", Finish);
}

specs::AppState LiveState(const SweepRecord& r) { return composite::LiveStateOf(r, r.trials); }

schedulers::MemberApp TrialMember(const SweepRecord& r, const TrialRecord& t) {
  schedulers::MemberApp m = composite::MemberOf(t, std::to_string(t.index), r.scheduler, r.cfg_json);
  std::string values = ValuesText(t.values);
  m.msg = t.phase == ChildPhase::kSubmitted ? values : t.msg.empty() ? values : values + ": " + t.msg;
  return m;
}

Result<TrialRole> FindTrialRole(const SweepRecord& r, const std::string& role) {
  std::string index_text = role.substr(0, role.find('.'));
  int index = -1;
  bool digits = !index_text.empty() && std::all_of(index_text.begin(), index_text.end(), ::isdigit);
  if (digits && index_text.size() < 9) index = std::stoi(index_text);
  const TrialRecord* t = nullptr;
  for (const TrialRecord& x : r.trials) {
    if (x.index == index) t = &x;
  }
  if (!t) {
    return NotFoundError(fmt::format("sweep {}: no trial `{}`; trials are 0 to {} (`<handle>/<trial>[.<role>]`)", r.id,
                                     role, r.trials.empty() ? 0 : r.trials.size() - 1));
  }
  return TrialRole{t, role.find('.') == std::string::npos ? std::string() : role.substr(role.find('.') + 1)};
}

schedulers::DescribeAppResponse DescribeSweep(const SweepRecord& r, TrialBackend& backend) {
  schedulers::DescribeAppResponse d;
  d.app_id = r.id;
  d.state = LiveState(r);
  specs::AppDef app;
  app.name = r.name;
  d.app = std::move(app);
  std::vector<std::string> counts;
  std::map<AppState, int> by_state;
  int queued = 0;
  for (const TrialRecord& t : r.trials) {
    std::optional<specs::AppStatus> live;
    if (t.phase == ChildPhase::kSubmitted && (!Queued(t) || ++queued <= kQueuedAsked)) {
      auto st = backend.Status(t.handle);
      if (st && *st) live = std::move(**st);
    }
    AppState state = live ? live->state : t.state;
    ++by_state[state];
    if (live) d.num_restarts += live->num_restarts;
    std::string name = std::to_string(t.index);
    if (live && !live->roles.empty()) {
      for (const specs::RoleStatus& lr : live->roles) {
        specs::RoleStatus rs = lr;
        rs.role = live->roles.size() == 1 ? name : name + "." + lr.role;
        for (auto& rep : rs.replicas) rep.role = rs.role;
        d.roles_statuses.push_back(std::move(rs));
      }
    } else {
      specs::RoleStatus rs;
      rs.role = name;
      specs::ReplicaStatus rep;
      rep.role = name;
      rep.state = state;
      rs.replicas.push_back(std::move(rep));
      d.roles_statuses.push_back(std::move(rs));
    }
    // The synthesized app has the trials' roles, so `log H/<trial>` resolves as for any app.
    for (const specs::RoleStatus& rs : d.roles_statuses) {
      if (rs.role != name && rs.role.rfind(name + ".", 0) != 0) continue;
      specs::Role role;
      role.name = rs.role;
      role.entrypoint = "trial";
      role.num_replicas = std::max<int>(1, static_cast<int>(rs.replicas.size()));
      d.app->roles.push_back(std::move(role));
    }
    schedulers::MemberApp m = TrialMember(r, t);
    m.state = state;
    d.members.push_back(std::move(m));
  }
  for (const auto& [state, n] : by_state) counts.push_back(fmt::format("{} {}", n, specs::AppStateName(state)));
  d.msg = fmt::format("{} trials: {}", r.trials.size(), fmt::join(counts, ", "));
  if (!r.msg.empty()) d.msg = r.msg + " (" + d.msg + ")";
  return d;
}

}  // namespace torchx::sweeps
