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
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "torchx/schedulers/scheduler.h"
#include "torchx/specs/app_state.h"
#include "torchx/status.h"

namespace torchx::composite {

/// What a claim recorded before its submission.
struct PlannedChild {
  std::string handle;        ///< the handle its dry run chose ("" where the scheduler picks at submission)
  bool id_is_final = false;  ///< the scheduler submits under exactly that id (DryRunInfo::app_id_is_final)
  double claimed = 0;        ///< when it was claimed (epoch seconds)
  /// Where the scheduler picks the id at submission: the key the submission was tagged with
  /// (DryRunInfo::submission_key), by which its scheduler finds it (Slurm: the job's comment).
  std::string key{};
  std::string scheduler{};  ///< the child's scheduler, where `key` is looked up
  bool operator==(const PlannedChild&) const = default;
};

/// How long a submission the dead driver began may still take to reach a scheduler that is asked
/// by key (sbatch retries a busy controller for about this long): a key not found is not "never
/// submitted" before then.
inline constexpr double kKeySettleSeconds = 120;

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

/// PlannedOf `info`'s dry run; where its scheduler picks the id only at submission, a new key
/// too, set as `info.submission_key` so that the submission is tagged with it.
PlannedChild PlanClaim(schedulers::DryRunInfo& info, const std::string& session);

/// What the children's schedulers can say of a claim.
struct ClaimLookup {
  /// Whether the scheduler knows the app `handle` now.
  std::function<Result<bool>(const std::string& handle)> exists;
  /// The handle of the app submitted on `scheduler` with `key`, nullopt where it knows none;
  /// kUnimplemented where that scheduler cannot look a submission up by key. May be empty.
  std::function<Result<std::optional<std::string>>(const std::string& scheduler, const std::string& key)> find;
  /// How long after a submission `find` still finds it (0: "not found" proves nothing).
  std::function<Result<double>(const std::string& scheduler)> findable_for;
};

/// The claim's fate; `now`: epoch seconds. A claim with a planned handle asks `exists`; one with a
/// key asks `find` (a found app is adopted: `planned.handle` becomes its handle) and, not found,
/// is never-submitted only once no submission can be in flight and while a submitted one would
/// still be found. An error from the lookup is returned (the claim stays for the next turn).
Result<ClaimFate> ResolveClaim(PlannedChild& planned, double now, const ClaimLookup& lookup);

/// A claim's fate, and what it planned (with the handle found by key, where it was).
struct ResolvedClaim {
  ClaimFate fate;
  PlannedChild planned;
};

/// The fates of `claims` (a child's key and what its claim recorded); claims still waiting (kWait)
/// are left out, to be asked again later.
template <typename Key>
Result<std::map<Key, ResolvedClaim>> ResolveClaims(std::vector<std::pair<Key, PlannedChild>> claims, double now,
                                                   const ClaimLookup& lookup) {
  std::map<Key, ResolvedClaim> out;
  for (auto& [key, planned] : claims) {
    TORCHX_ASSIGN_OR_RETURN(ClaimFate fate, ResolveClaim(planned, now, lookup));
    if (fate != ClaimFate::kWait) out.emplace(key, ResolvedClaim{fate, std::move(planned)});
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
