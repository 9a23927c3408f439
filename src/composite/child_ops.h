// What every kind does to its children the same way, once: mark the waiting ones not run, fail
// the claimed ones, resolve a dead driver's claims, record a cancel. Over any kind's record: its
// children are `record.*children` (a member pointer, e.g. &PipelineRecord::steps), each deriving
// ChildRecord; `settle` is the kind's own bookkeeping after a change (dependents not run, the
// final state once every child is final).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "composite/child_backend.h"
#include "composite/child_list.h"
#include "composite/children.h"
#include "composite/claims.h"
#include "composite/fault_points.h"
#include "composite/record.h"
#include "torchx/status.h"

namespace torchx::composite {

/// Every waiting child will not run: kSkipped, CANCELLED, "not run: <why>".
template <typename Child>
void SkipWaiting(ChildList<Child>& children, const std::string& why) {
  for (size_t i = 0; i < children.size(); ++i) {
    if (children[i].phase != ChildPhase::kWaiting) continue;
    Child& c = children.Mut(i);
    c.phase = ChildPhase::kSkipped;
    c.state = specs::AppState::kCancelled;
    c.msg = "not run: " + why;
  }
}

/// Every claimed child (kSubmitting) failed with why(child): it may or may not have been
/// submitted, and submitting it again could run it twice.
template <typename Child>
void FailClaimed(ChildList<Child>& children,
                 const std::type_identity_t<std::function<std::string(const Child&)>>& why) {
  for (size_t i = 0; i < children.size(); ++i) {
    if (children[i].phase != ChildPhase::kSubmitting) continue;
    Child& c = children.Mut(i);
    c.phase = ChildPhase::kDone;
    c.state = specs::AppState::kFailed;
    c.msg = why(c);
  }
}

/// The claims a dead driver (or this one, failing to record) left in composite `id`, resolved by
/// their planned handles (claims.h) and applied under the store's lock; claims still settling are
/// left for a later call. kNotFound for an unknown id.
template <typename Store, typename Record, typename Child>
Status ResolveClaimsIn(Store& store, const std::string& id, ChildBackend& backend, ChildList<Child> Record::*children,
                       const std::type_identity_t<std::function<std::string(const Child&)>>& why_unknown,
                       const std::type_identity_t<std::function<void(Record&)>>& settle) {
  TORCHX_ASSIGN_OR_RETURN(auto record, store.Get(id));
  if (!record) return NotFoundError(fmt::format("{} {} does not exist", store.kind(), id));
  std::vector<std::pair<size_t, PlannedChild>> claims;  // keyed by position: children never move
  const ChildList<Child>& before = (*record).*children;
  for (size_t i = 0; i < before.size(); ++i) {
    if (before[i].phase == ChildPhase::kSubmitting) claims.emplace_back(i, before[i].planned);
  }
  if (claims.empty()) return OkStatus();
  TORCHX_ASSIGN_OR_RETURN(auto fates, ResolveClaims<size_t>(std::move(claims), EpochNow(), LookupThrough(backend)));
  if (fates.empty()) return OkStatus();
  auto resolved = store.Update(id, [&](Record& r) {
    ChildList<Child>& now = r.*children;
    for (const auto& [i, claim] : fates) {
      if (i < now.size() && now[i].phase == ChildPhase::kSubmitting) {
        Child& c = now.Mut(i);
        c.planned = claim.planned;  // with the handle found by key, where it was
        ApplyClaimFate(c, claim.fate, EpochNow(), why_unknown(c));
      }
    }
    // A claim found never submitted waits again; after a cancel nothing would ever submit it.
    if (r.cancel_requested) SkipWaiting(now, fmt::format("the {} was cancelled", store.kind()));
    settle(r);
    return OkStatus();
  });
  if (resolved) FaultPoint("claims_resolved");
  return resolved.status();
}

/// Records a cancel of composite `id` (once: an ended composite is left as it is): the waiting
/// children are marked not run ("not run: <why>"), then the submitted ones are cancelled through
/// their schedulers, all of them even when one fails. Idempotent.
template <typename Store, typename Record, typename Child>
Status CancelComposite(Store& store, const std::string& id, ChildBackend& backend, ChildList<Child> Record::*children,
                       const std::string& why, const std::type_identity_t<std::function<void(Record&)>>& settle) {
  std::vector<std::string> handles;
  auto updated = store.Update(id, [&](Record& r) {
    if (r.final_state) return OkStatus();
    r.cancel_requested = true;
    for (const Child& c : r.*children) {
      if (c.phase == ChildPhase::kSubmitted) handles.push_back(c.handle);
    }
    SkipWaiting(r.*children, why);
    settle(r);
    return OkStatus();
  });
  if (!updated) return updated.error();
  return CancelChildren(handles, [&backend](const std::string& h) { return backend.Cancel(h); });
}

/// The state a composite reports: its final state once it has ended; else RUNNING once a child
/// runs or has ended (more to go), PENDING before.
template <typename Child>
specs::AppState LiveStateOf(const RecordHeader& header, const ChildList<Child>& children) {
  if (header.final_state) return *header.final_state;
  for (const Child& c : children) {
    bool runs = c.phase == ChildPhase::kSubmitted && c.state == specs::AppState::kRunning;
    if (runs || c.phase == ChildPhase::kDone) return specs::AppState::kRunning;
  }
  return specs::AppState::kPending;
}

/// The record once no driver can move composite `id`: `abandon` applied under the lock (unless it
/// has ended), then the children that run refreshed through `refresh` (the kind's, which never
/// submits).
template <typename Store, typename Record, typename Backend>
Result<std::optional<Record>> AbandonThenRefresh(Store& store, const std::string& id, Backend& backend,
                                                 const std::type_identity_t<std::function<void(Record&)>>& abandon,
                                                 Result<Record> (*refresh)(Store&, const std::string&, Backend&)) {
  auto abandoned = store.Update(id, [&](Record& cur) {
    if (!cur.final_state) abandon(cur);
    return OkStatus();
  });
  if (!abandoned) return abandoned.error();
  TORCHX_ASSIGN_OR_RETURN(Record r, refresh(store, id, backend));
  return std::optional(std::move(r));
}

/// A child built and dry-run (outside the record's lock), not yet claimed: what Schedule submits,
/// and the handle the dry run chose (recorded with the claim).
struct ChildPlan {
  schedulers::DryRunInfo info;
  PlannedChild planned;
};

/// Claims, under the lock, the children `plans` names (by position) that are still `claimable`
/// and the composite neither cancelled nor ended: each becomes kSubmitting with its plan's handle
/// and the time. A child whose plan failed fails here, as its submission would have. `out` gets
/// the record as written; returns the plans claimed.
template <typename Store, typename Record, typename Child>
Result<std::map<size_t, ChildPlan>> ClaimChildren(
    Store& store, const std::string& id, ChildList<Child> Record::*children, std::map<size_t, Result<ChildPlan>> plans,
    const std::type_identity_t<std::function<bool(const Record&, const Child&)>>& claimable,
    const std::type_identity_t<std::function<void(Record&)>>& settle, Record& out) {
  std::map<size_t, ChildPlan> claimed;
  auto updated = store.Update(id, [&](Record& r) {
    claimed.clear();
    if (r.cancel_requested || r.final_state) return OkStatus();
    ChildList<Child>& now = r.*children;
    for (auto& [i, plan] : plans) {
      if (i >= now.size() || !claimable(r, now[i])) continue;
      Child& c = now.Mut(i);
      if (!plan) {
        c.phase = ChildPhase::kDone;
        c.state = specs::AppState::kFailed;
        c.msg = "submission failed: " + plan.error().message();
        continue;
      }
      c.phase = ChildPhase::kSubmitting;
      c.planned = plan->planned;
      c.planned.claimed = EpochNow();
      claimed.emplace(i, *plan);
    }
    settle(r);
    return OkStatus();
  });
  if (!updated) return updated.error();
  if (!claimed.empty()) FaultPoint("claimed");
  out = std::move(*updated);
  return claimed;
}

/// Submits claimed children and records, in one write, each one's handle (kSubmitted) or why its
/// scheduler refused it (kDone, FAILED). A cancel that arrived meanwhile cancels them at once. A
/// record that cannot be written leaves nothing running: they are cancelled, and failed if the
/// store takes that much. Returns the record as written.
template <typename Store, typename Record, typename Child>
Result<Record> SubmitClaimed(Store& store, const std::string& id, ChildBackend& backend,
                             ChildList<Child> Record::*children, const std::map<size_t, ChildPlan>& claimed,
                             const std::type_identity_t<std::function<void(Record&)>>& settle) {
  std::map<size_t, Result<std::string>> handles;
  for (const auto& [i, plan] : claimed) handles.emplace(i, backend.Schedule(plan.info));
  FaultPoint("scheduled");
  auto cancel_all = [&] {
    for (const auto& [i, handle] : handles) {
      if (handle) (void)backend.Cancel(*handle);
    }
  };
  bool cancel_now = false;
  auto recorded = store.Update(id, [&](Record& cur) {
    ChildList<Child>& now = cur.*children;
    double when = EpochNow();
    for (const auto& [i, handle] : handles) {
      if (i >= now.size()) continue;
      Child& c = now.Mut(i);
      c.planned = {};
      if (handle) {
        c.phase = ChildPhase::kSubmitted;
        c.handle = *handle;
        c.state = specs::AppState::kSubmitted;
        c.submitted = when;
      } else {
        c.phase = ChildPhase::kDone;
        c.state = specs::AppState::kFailed;
        c.msg = "submission failed: " + handle.error().message();
      }
    }
    cancel_now = cur.cancel_requested;
    settle(cur);
    return OkStatus();
  });
  if (!recorded) {
    cancel_all();
    std::string why = "its handle could not be recorded (" + recorded.error().message() + "); it was cancelled";
    (void)store.Update(id, [&](Record& cur) {
      FailClaimed<Child>(cur.*children, [&why](const Child&) { return why; });
      settle(cur);
      return OkStatus();
    });
    return recorded.error();
  }
  FaultPoint("recorded");
  if (cancel_now) cancel_all();
  return std::move(*recorded);
}

/// A child as a member of its composite (MemberApp), from what its record holds: its last known
/// state, handle and times; the kind adds its message and dependencies.
inline schedulers::MemberApp MemberOf(const ChildRecord& c, std::string name, std::string scheduler,
                                      std::string cfg_json) {
  schedulers::MemberApp m;
  m.name = std::move(name);
  m.app_handle = c.handle;
  m.scheduler = std::move(scheduler);
  m.state = c.phase == ChildPhase::kRefused ? specs::AppState::kFailed : c.state;
  m.submitted = c.submitted;
  m.ended = c.ended;
  m.cfg_json = std::move(cfg_json);
  return m;
}

}  // namespace torchx::composite
