// Which listed apps `torchx list --state/--name/--since` and the dashboard's apps page keep, and
// which are shown nested under a composite: one rule for both, pure over the schedulers' listings.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "torchx/schedulers/scheduler.h"
#include "torchx/specs/app_state.h"

namespace torchx::runner {

struct AppFilter {
  std::set<specs::AppState> states;  ///< empty: any
  std::string name;                  ///< a substring of the app's name or id, any case; empty: any
  /// Submitted at or after (epoch seconds). An app whose listing has no time is kept: the
  /// scheduler cannot say, and dropping it would hide it.
  std::optional<double> since;
};

bool Matches(const AppFilter& filter, const schedulers::ListAppResponse& app);

/// The handles of the members of the composite apps listed (a pipeline's steps): the views show
/// them nested under their composite, not again on their own.
std::set<std::string> MemberHandles(const std::vector<schedulers::ListAppResponse>& apps);

}  // namespace torchx::runner
