#include "composite/claims.h"

#include <random>

#include <fmt/format.h>

#include "torchx/specs/app_handle.h"

namespace torchx::composite {
namespace {

// 16 hex digits, unguessable enough that no other submission carries them.
std::string NewSubmissionKey() {
  std::random_device rd;
  std::uint64_t bits = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  return fmt::format("{:016x}", bits);
}

}  // namespace

PlannedChild PlannedOf(const std::string& scheduler, const std::string& session, const std::string& app_id,
                       bool app_id_is_final) {
  PlannedChild out;
  out.scheduler = scheduler;
  if (app_id.empty()) return out;
  out.handle = specs::MakeAppHandle(scheduler, session, app_id);
  out.id_is_final = app_id_is_final;
  return out;
}

PlannedChild PlanClaim(schedulers::DryRunInfo& info, const std::string& session) {
  PlannedChild out = PlannedOf(info.scheduler, session, info.app_id, info.app_id_is_final);
  if (out.handle.empty()) {
    out.key = NewSubmissionKey();
    info.submission_key = out.key;
  }
  return out;
}

Result<ClaimFate> ResolveClaim(PlannedChild& planned, double now, const ClaimLookup& lookup) {
  double age = now - planned.claimed;
  if (planned.handle.empty()) {
    if (planned.key.empty() || !lookup.find) return ClaimFate::kUnknowable;
    auto found = lookup.find(planned.scheduler, planned.key);
    if (!found && found.error().code() == StatusCode::kUnimplemented) return ClaimFate::kUnknowable;
    if (!found) return found.error();
    if (*found) {  // submitted, and found by its key: adopted
      planned.handle = **found;
      return ClaimFate::kAdopt;
    }
    if (age < kKeySettleSeconds) return ClaimFate::kWait;
    double findable = 0;
    if (lookup.findable_for) {
      TORCHX_ASSIGN_OR_RETURN(findable, lookup.findable_for(planned.scheduler));
    }
    // Submitted no earlier than the claim, a job would still be listed: it never was.
    return age < findable ? ClaimFate::kNotSubmitted : ClaimFate::kUnknowable;
  }
  TORCHX_ASSIGN_OR_RETURN(bool there, lookup.exists(planned.handle));
  if (there) return ClaimFate::kAdopt;  // adopting what is there is always safe
  if (!planned.id_is_final) return ClaimFate::kUnknowable;
  return age < kClaimSettleSeconds ? ClaimFate::kWait : ClaimFate::kNotSubmitted;
}

}  // namespace torchx::composite
