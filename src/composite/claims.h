// The claimed-but-unrecorded rule, once for every composite kind. A driver claims a child (under
// the record's lock) with the handle its dry run chose, submits it, then records the handle it
// got. A driver that dies between the two leaves a claim; the next driver resolves it here, by
// asking the child's scheduler for the planned handle: the app is there (adopt it: it runs, and
// is watched from now on), or it is not and the scheduler keeps the ids its dry runs choose (it
// was never submitted: the child may be submitted again, once the claim is older than any start
// still in flight could take to be recorded), or nothing can be known (it may have been submitted
// under another id: the child is failed, never submitted twice).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "torchx/specs/app_state.h"
#include "torchx/status.h"

namespace torchx::composite {

/// What a claim recorded before its submission.
struct PlannedChild {
  std::string handle;        ///< the handle its dry run chose ("" where the scheduler picks at submission)
  bool id_is_final = false;  ///< the scheduler submits under exactly that id (DryRunInfo::app_id_is_final)
  double claimed = 0;        ///< when it was claimed (epoch seconds)
};

/// How long a start that the dead driver began may still take to reach its scheduler's record (a
/// local app handed to a warm supervisor is started by that supervisor after its caller died): a
/// claim whose app is not there is claimed again only once it is this old.
inline constexpr double kClaimSettleSeconds = 5;

enum class ClaimFate {
  kAdopt,         ///< submitted: record the planned handle as the child's
  kNotSubmitted,  ///< never submitted: the child may be submitted again (with a new dry run)
  kWait,          ///< not there yet, and a start may still be in flight: ask again later
  kUnknowable,    ///< may have been submitted: fail the child, never submit it twice
};

/// What a claim records of a child's dry run: the handle it chose (in `session`) and whether its
/// scheduler keeps it. An empty handle where the scheduler picks ids at submission.
PlannedChild PlannedOf(const std::string& scheduler, const std::string& session, const std::string& app_id,
                       bool app_id_is_final);

/// `exists(handle)`: whether the child's scheduler knows the app now; `now`: epoch seconds. An
/// error from `exists` is returned (the claim stays for the next driver turn).
Result<ClaimFate> ResolveClaim(const PlannedChild& planned, double now,
                               const std::function<Result<bool>(const std::string&)>& exists);

/// The fates of `claims` (a child's key and what its claim recorded), asking `exists` for each
/// planned handle; claims still waiting (kWait) are left out, to be asked again later.
template <typename Key>
Result<std::map<Key, ClaimFate>> ResolveClaims(const std::vector<std::pair<Key, PlannedChild>>& claims, double now,
                                               const std::function<Result<bool>(const std::string&)>& exists) {
  std::map<Key, ClaimFate> out;
  for (const auto& [key, planned] : claims) {
    TORCHX_ASSIGN_OR_RETURN(ClaimFate fate, ResolveClaim(planned, now, exists));
    if (fate != ClaimFate::kWait) out.emplace(key, fate);
  }
  return out;
}

/// Applies a claim's fate to a kind's child record (its phase enum has kWaiting, kSubmitted and
/// kDone): adopted under its planned handle, waiting to be claimed again, or FAILED with
/// `why_unknown`. The claim's planned fields are cleared.
template <typename Child>
void ApplyClaimFate(Child& child, ClaimFate fate, double now, const std::string& why_unknown) {
  using Phase = decltype(child.phase);
  if (fate == ClaimFate::kAdopt) {
    child.phase = Phase::kSubmitted;
    child.handle = child.planned.handle;
    child.state = specs::AppState::kSubmitted;
    child.submitted = now;
  } else if (fate == ClaimFate::kNotSubmitted) {
    child.phase = Phase::kWaiting;  // claimed again, with a new dry run
  } else if (fate == ClaimFate::kUnknowable) {
    child.phase = Phase::kDone;
    child.state = specs::AppState::kFailed;
    child.msg = why_unknown;
  }
  child.planned = {};
}

}  // namespace torchx::composite
