// Which listed apps `torchx list --state/--name/--since` and the dashboard's apps page keep: one
// rule for both, pure over what a scheduler's listing says.
#pragma once

#include <optional>
#include <set>
#include <string>

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

}  // namespace torchx::runner
