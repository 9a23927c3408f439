// What record.h declares: the phases' names and a child's status applied.
#include "composite/record.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace torchx::composite {
namespace {

constexpr std::array<std::string_view, 6> kPhaseNames = {"waiting", "submitting", "submitted",
                                                         "done",    "skipped",    "refused"};

}  // namespace

std::string_view ChildPhaseName(ChildPhase phase) { return kPhaseNames.at(static_cast<size_t>(phase)); }

Result<ChildPhase> ParseChildPhase(std::string_view name, std::string_view kind) {
  auto it = std::find(kPhaseNames.begin(), kPhaseNames.end(), name);
  if (it == kPhaseNames.end()) {
    return InvalidArgumentError(fmt::format("{} record: phase: invalid value '{}', must be one of [{}]", kind, name,
                                            fmt::join(kPhaseNames, ", ")));
  }
  return static_cast<ChildPhase>(it - kPhaseNames.begin());
}

bool ApplyChildStatus(ChildRecord& child, const Result<std::optional<specs::AppStatus>>& seen, double now) {
  if (child.phase != ChildPhase::kSubmitted || !seen) return false;
  const std::optional<specs::AppStatus>& status = *seen;
  if (!status) {
    child.phase = ChildPhase::kDone;
    child.state = specs::AppState::kFailed;
    child.msg = fmt::format("{} no longer exists on its scheduler", child.handle);
  } else {
    child.state = status->state;
    if (!specs::IsTerminal(status->state)) return false;
    child.phase = ChildPhase::kDone;
    child.msg = status->msg;
  }
  if (!child.ended) child.ended = now;
  return true;
}

}  // namespace torchx::composite
