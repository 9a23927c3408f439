// A managed job for the composite kernel (composite/composite_scheduler.h): its record, store and
// child seam, and what is its own. The facade's part is in managed_scheduler.cc, the driver's in
// driver.cc.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "composite/composite_scheduler.h"
#include "managed/driver.h"
#include "managed/record.h"
#include "torchx/managed/managed.h"
#include "torchx/runner/runner.h"
#include "torchx/schedulers/scheduler.h"

namespace torchx::managed {

struct ManagedKind : composite::KindOf<ManagedKind, ManagedRecord, AttemptRecord, ManagedStore, AttemptBackend> {
  static constexpr composite::KindNames kNames{
      kSchedulerName, "managed job", "managed",
      "`torchx run --managed -s SCHEDULER ...` (or Runner.run(..., managed=True) in Python)"};
  static std::unique_ptr<Backend> MakeBackend(runner::Runner& runner) { return MakeRunnerAttemptBackend(runner); }
  static constexpr auto kChildren = &ManagedRecord::attempts;
  static std::string Label(const AttemptRecord& a);
  static schedulers::MemberApp Member(const Record& r, const AttemptRecord& a);
  static specs::AppState LiveState(const Record& r);
  static int Restarts(const Record& r);
  // No driver can start: this process takes a turn itself, under the driver's lock.
  static Result<std::optional<Record>> WithoutDriver(Store& store, const std::string& id, Backend& backend,
                                                     const std::string& why);
  static schedulers::DescribeAppResponse Describe(const Record& r, Backend& backend, runner::Runner& runner);
  // Recorded first (the driver stops recovering), then the current attempt cancelled now rather
  // than at the driver's next turn.
  static Status Cancel(Store& store, const std::string& state_dir, const std::string& id, Backend& backend);
  static Result<std::unique_ptr<composite::DriverTurns>> StartTurns(Store& store, const std::string& id,
                                                                    Backend& backend, const Record& r);
};

}  // namespace torchx::managed
