#include "composite/claims.h"

#include "torchx/specs/app_handle.h"

namespace torchx::composite {

PlannedChild PlannedOf(const std::string& scheduler, const std::string& session, const std::string& app_id,
                       bool app_id_is_final) {
  if (app_id.empty()) return {};
  return {specs::MakeAppHandle(scheduler, session, app_id), app_id_is_final};
}

Result<ClaimFate> ResolveClaim(const PlannedChild& planned, double now,
                               const std::function<Result<bool>(const std::string&)>& exists) {
  if (planned.handle.empty()) return ClaimFate::kUnknowable;
  TORCHX_ASSIGN_OR_RETURN(bool there, exists(planned.handle));
  if (there) return ClaimFate::kAdopt;  // adopting what is there is always safe
  if (!planned.id_is_final) return ClaimFate::kUnknowable;
  return now - planned.claimed < kClaimSettleSeconds ? ClaimFate::kWait : ClaimFate::kNotSubmitted;
}

}  // namespace torchx::composite
