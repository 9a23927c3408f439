#include "sweeps/engine.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "composite/children.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/serialize.h"

namespace torchx::sweeps {
namespace {

using specs::AppState;

bool IsFinal(const TrialRecord& t) { return t.phase == TrialPhase::kDone || t.phase == TrialPhase::kSkipped; }
bool Runs(const TrialRecord& t) { return t.phase == TrialPhase::kSubmitting || t.phase == TrialPhase::kSubmitted; }

// A trial that ended other than SUCCEEDED, not by the sweep's own cancel.
bool Failed(const SweepRecord& r, const TrialRecord& t) {
  return t.phase == TrialPhase::kDone && t.state != AppState::kSucceeded &&
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
    skipped = skipped || t.phase == TrialPhase::kSkipped;
  }
  const TrialRecord* best = BestTrial(r);
  std::string best_text = best && r.objective
                              ? fmt::format("best trial {} ({}): {}={}", best->index, ValuesText(best->values),
                                            r.objective->metric, *best->objective)
                              : "";
  if (r.cancel_requested) {
    r.final_state = AppState::kCancelled;
    r.msg = "cancelled";
  } else if (!failed.empty() || skipped) {
    r.final_state = AppState::kFailed;
    std::string not_run = "trials did not run";
    auto skipped_count = std::count_if(r.trials.begin(), r.trials.end(),
                                       [](const TrialRecord& x) { return x.phase == TrialPhase::kSkipped; });
    for (const TrialRecord& t : r.trials) {  // why: the first reason given
      if (t.phase == TrialPhase::kSkipped && !t.msg.empty()) {
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
  for (TrialRecord& t : r.trials) {
    auto it = seen.find(t.index);
    if (t.phase != TrialPhase::kSubmitted || it == seen.end()) continue;
    Summary summary = Summarize(it->second.reports, r.objective);
    if (!summary.metrics.empty()) {
      t.metrics = std::move(summary.metrics);
      t.objective = summary.objective;
    }
    if (!it->second.status) continue;  // the scheduler did not answer: asked again next time
    const auto& status = *it->second.status;
    if (!status) {
      t.phase = TrialPhase::kDone;
      t.state = AppState::kFailed;
      t.msg = fmt::format("{} no longer exists on its scheduler", t.handle);
    } else {
      t.state = status->state;
      if (specs::IsTerminal(status->state)) {
        t.phase = TrialPhase::kDone;
        t.msg = status->msg;
      }
    }
    if (t.phase == TrialPhase::kDone && !t.ended) t.ended = composite::EpochNow();
  }
  // Stop early: once `max_failures` trials failed, what has not started never will.
  if (auto why = StopReason(r)) {
    AbandonWaiting(r, *why);
    return;
  }
  Finish(r);
}

// Submitted trials that have not started (an array's waiting tasks, a job in a queue).
bool Queued(const TrialRecord& t) {
  return t.phase == TrialPhase::kSubmitted && (t.state == AppState::kSubmitted || t.state == AppState::kPending);
}

TrialRecord* TrialAt(SweepRecord& r, int index) {
  if (index >= 0 && index < static_cast<int>(r.trials.size()) && r.trials[index].index == index)
    return &r.trials[index];
  for (TrialRecord& t : r.trials) {
    if (t.index == index) return &t;
  }
  return nullptr;
}

// Whether a trial's scheduler knows `handle` (a claim's planned handle).
std::function<Result<bool>(const std::string&)> Exists(TrialBackend& backend) {
  return [&backend](const std::string& handle) -> Result<bool> {
    TORCHX_ASSIGN_OR_RETURN(auto status, backend.Status(handle));
    return status.has_value();
  };
}

bool Claimable(const SweepRecord& r, const TrialRecord& t) {
  return t.phase == TrialPhase::kWaiting && !(r.space.type == SpaceType::kAx && t.values.empty());
}

// Plans up to `n` waiting trials (index order; each built and dry-run outside the lock), then
// claims them under the lock with the handles their dry runs chose. A trial that cannot be
// built or dry-run fails here, as its submission would have.
Result<std::map<int, TrialDryRun>> Claim(SweepStore& store, const std::string& id, TrialBackend& backend,
                                         const SweepRecord& before, int n, SweepRecord& out) {
  std::map<int, Result<TrialDryRun>> plans;
  for (const TrialRecord& t : before.trials) {
    if (static_cast<int>(plans.size()) >= n) break;
    if (Claimable(before, t)) plans.emplace(t.index, backend.Plan(before, t));
  }
  std::map<int, TrialDryRun> claimed;
  auto updated = store.Update(id, [&](SweepRecord& r) {
    claimed.clear();
    if (r.cancel_requested || r.final_state) return OkStatus();
    for (auto& [index, plan] : plans) {
      TrialRecord* t = TrialAt(r, index);
      if (!t || !Claimable(r, *t)) continue;
      if (!plan) {
        t->phase = TrialPhase::kDone;
        t->state = AppState::kFailed;
        t->msg = "submission failed: " + plan.error().message();
        continue;
      }
      t->phase = TrialPhase::kSubmitting;
      t->planned = plan->planned;
      t->planned.claimed = composite::EpochNow();
      claimed.emplace(index, *plan);
    }
    Apply(r, {});
    return OkStatus();
  });
  if (!updated) return updated.error();
  out = std::move(*updated);
  return claimed;
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
    if (t.phase != TrialPhase::kWaiting) continue;
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
    for (TrialRecord& t : cur.trials) {  // in index order: the lowest waiting trials get values
      if (next == proposals->size()) break;
      if (t.phase != TrialPhase::kWaiting || !t.values.empty()) continue;
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

Result<SweepRecord> Refresh(SweepStore& store, const std::string& id, TrialBackend& backend) {
  TORCHX_ASSIGN_OR_RETURN(auto current, store.Get(id));
  if (!current) return NotFoundError(fmt::format("sweep {} does not exist", id));
  if (current->final_state) return std::move(*current);
  // Ask the scheduler and read the reports outside the lock, then apply under it.
  std::map<int, Seen> seen;
  int queued = 0;
  for (const TrialRecord& t : current->trials) {
    if (t.phase != TrialPhase::kSubmitted) continue;
    if (Queued(t) && ++queued > kQueuedAsked) continue;  // their turn comes as the first ones start
    seen.emplace(t.index, Seen{backend.Status(t.handle), backend.Reports(*current, t)});
  }
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
      for (TrialRecord& t : cur.trials) {
        if (!cancelled.count(t.index) || t.phase != TrialPhase::kSubmitted) continue;
        t.phase = TrialPhase::kSkipped;
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
    SweepRecord claimed_in;
    TORCHX_ASSIGN_OR_RETURN(auto claimed, Claim(store, id, backend, r, std::min(slots, kBatch), claimed_in));
    if (claimed.empty()) return claimed_in;
    std::map<int, Result<std::string>> handles;
    for (const auto& [index, plan] : claimed) handles.emplace(index, backend.Schedule(plan.info));
    bool cancel_now = false;
    auto recorded = store.Update(id, [&](SweepRecord& cur) {
      for (auto& [index, handle] : handles) {
        TrialRecord* t = TrialAt(cur, index);
        t->planned = {};
        if (handle) {
          t->phase = TrialPhase::kSubmitted;
          t->handle = *handle;
          t->state = AppState::kSubmitted;
          t->submitted = composite::EpochNow();
        } else {
          t->phase = TrialPhase::kDone;
          t->state = AppState::kFailed;
          t->msg = "submission failed: " + handle.error().message();
        }
      }
      cancel_now = cur.cancel_requested;
      Apply(cur, {});
      return OkStatus();
    });
    if (!recorded) {
      // Not recorded: leave nothing running, and fail the trials if the store takes that much.
      for (auto& [index, handle] : handles) {
        if (handle) (void)backend.Cancel(*handle);
      }
      std::string why = recorded.error().message();
      (void)store.Update(id, [&](SweepRecord& cur) {
        FailUnrecorded(cur, "its handle could not be recorded (" + why + "); it was cancelled");
        return OkStatus();
      });
      return recorded.error();
    }
    if (cancel_now) {
      for (auto& [index, handle] : handles) {
        if (handle) (void)backend.Cancel(*handle);
      }
    }
    r = std::move(*recorded);
  }
  return r;
}

Status ResolveClaims(SweepStore& store, const std::string& id, TrialBackend& backend, const std::string& why_unknown) {
  TORCHX_ASSIGN_OR_RETURN(auto record, store.Get(id));
  if (!record) return NotFoundError(fmt::format("sweep {} does not exist", id));
  std::vector<std::pair<int, composite::PlannedChild>> claims;
  for (const TrialRecord& t : record->trials) {
    if (t.phase == TrialPhase::kSubmitting) claims.emplace_back(t.index, t.planned);
  }
  if (claims.empty()) return OkStatus();
  TORCHX_ASSIGN_OR_RETURN(auto fates, composite::ResolveClaims(claims, composite::EpochNow(), Exists(backend)));
  if (fates.empty()) return OkStatus();
  return store
      .Update(id,
              [&](SweepRecord& r) {
                for (auto& [index, fate] : fates) {
                  TrialRecord* t = TrialAt(r, index);
                  if (t && t->phase == TrialPhase::kSubmitting) {
                    composite::ApplyClaimFate(*t, fate, composite::EpochNow(), why_unknown);
                  }
                }
                Apply(r, {});
                return OkStatus();
              })
      .status();
}

void FailUnrecorded(SweepRecord& r, const std::string& why) {
  for (TrialRecord& t : r.trials) {
    if (t.phase != TrialPhase::kSubmitting) continue;
    t.phase = TrialPhase::kDone;
    t.state = AppState::kFailed;
    t.msg = why;
  }
  Apply(r, {});
}

void AbandonWaiting(SweepRecord& r, const std::string& why) {
  for (TrialRecord& t : r.trials) {
    if (t.phase != TrialPhase::kWaiting) continue;
    t.phase = TrialPhase::kSkipped;
    t.state = AppState::kCancelled;
    t.msg = "not run: " + why;
  }
  Finish(r);
}

::torchx::Status CancelSweep(SweepStore& store, const std::string& id, TrialBackend& backend) {
  std::vector<std::string> handles;
  auto updated = store.Update(id, [&](SweepRecord& r) {
    if (r.final_state) return OkStatus();
    r.cancel_requested = true;
    for (TrialRecord& t : r.trials) {
      if (t.phase == TrialPhase::kSubmitted) handles.push_back(t.handle);
    }
    AbandonWaiting(r, "the sweep was cancelled");
    return OkStatus();
  });
  if (!updated) return updated.error();
  return composite::CancelChildren(handles, [&backend](const std::string& h) { return backend.Cancel(h); });
}

specs::AppState LiveState(const SweepRecord& r) {
  if (r.final_state) return *r.final_state;
  for (const TrialRecord& t : r.trials) {
    if ((t.phase == TrialPhase::kSubmitted && t.state == AppState::kRunning) || t.phase == TrialPhase::kDone) {
      return AppState::kRunning;
    }
  }
  return AppState::kPending;
}

schedulers::MemberApp TrialMember(const SweepRecord& r, const TrialRecord& t) {
  schedulers::MemberApp m;
  m.name = std::to_string(t.index);
  m.app_handle = t.handle;
  m.scheduler = r.scheduler;
  m.state = t.state;
  m.submitted = t.submitted;
  m.ended = t.ended;
  m.cfg_json = r.cfg_json;
  std::string values = ValuesText(t.values);
  m.msg = t.phase == TrialPhase::kSubmitted ? values : t.msg.empty() ? values : values + ": " + t.msg;
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
    if (t.phase == TrialPhase::kSubmitted && (!Queued(t) || ++queued <= kQueuedAsked)) {
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
