// The driver's own log (`<id>.driver.log`, read by `torchx log H --driver` and the dashboard's
// "driver log"): what the driver saw happen to its children, one line each, as a controller's log
// reads in Ray or SkyPilot. Every kind's driver writes it the same way: JournalTurns wraps the
// kind's turns and compares the record after each turn with the one before.
#pragma once

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "composite/child_list.h"
#include "composite/driver_loop.h"
#include "composite/record.h"
#include "torchx/specs/app_state.h"

namespace torchx::composite {

/// The line saying how a child changed from `before` (nullptr: it was not there) to `now`, or ""
/// when nothing a reader follows changed: "trial 3: submitted as local_cwd://s/x; RUNNING",
/// "steps.train: FAILED (exited with code 1)", "trial 5: skipped (not run: the sweep stopped ...)".
std::string ChildEventLine(const std::string& label, const ChildRecord* before, const ChildRecord& now);

/// "driver started (pid 123): 10 children: 3 SUCCEEDED, 2 RUNNING, 5 waiting".
std::string DriverStartedLine(long pid, const std::vector<const ChildRecord*>& children);

/// A line of the journal as it is written: the UTC time, then `line`.
std::string JournalLine(double epoch_seconds, const std::string& line);

/// The lines for what changed between two reads of the children. A ChildList shares a child that
/// did not change, so a turn that changed nothing costs a pointer comparison per child.
template <typename Child, typename LabelFn>
std::vector<std::string> ChildEvents(const ChildList<Child>& before, const ChildList<Child>& now, LabelFn label) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < now.size(); ++i) {
    bool had = i < before.size();
    if (had && before.SameChild(i, now, i)) continue;
    std::string line = ChildEventLine(label(now[i]), had ? &before[i] : nullptr, now[i]);
    if (!line.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

/// The kind's turns, each followed by a read of the record and its changes written to `out` (the
/// driver's stderr, which is its log).
template <typename Kind>
class JournalTurns final : public DriverTurns {
 public:
  using Record = typename Kind::Record;
  JournalTurns(typename Kind::Store& store, std::string id, std::unique_ptr<DriverTurns> inner, long pid,
               std::FILE* out = stderr)
      : store_(store), id_(std::move(id)), inner_(std::move(inner)), out_(out) {
    if (auto record = store_.Get(id_); record && *record) {
      std::vector<const ChildRecord*> children;
      for (const auto& c : (**record).*Kind::kChildren) children.push_back(&c);
      Write(DriverStartedLine(pid, children));
      last_ = std::move(**record);
    }
  }

  Result<TurnResult> Turn() override {
    auto turn = inner_->Turn();
    auto record = store_.Get(id_);
    if (!record || !*record) return turn;  // unreadable now: the next turn compares with the last
    const Record& now = **record;
    if (last_) {
      for (const std::string& line :
           ChildEvents((*last_).*Kind::kChildren, now.*Kind::kChildren, [](const auto& c) { return Kind::Label(c); })) {
        Write(line);
      }
      if (now.cancel_requested && !last_->cancel_requested) Write("cancel requested");
    }
    if (now.final_state && (!last_ || !last_->final_state)) {
      Write(fmt::format("{} ended {}{}", Kind::kNames.noun, specs::AppStateName(*now.final_state),
                        now.msg.empty() ? "" : ": " + now.msg));
    }
    last_ = std::move(**record);
    return turn;
  }
  bool WaitForUpdate(const std::string& handle, std::chrono::milliseconds max_wait) override {
    return inner_->WaitForUpdate(handle, max_wait);
  }
  bool WaitForAnyUpdate(const std::vector<std::string>& handles, std::chrono::milliseconds max_wait) override {
    return inner_->WaitForAnyUpdate(handles, max_wait);
  }

 private:
  void Write(const std::string& line);

  typename Kind::Store& store_;
  std::string id_;
  std::unique_ptr<DriverTurns> inner_;
  std::FILE* out_;
  std::optional<Record> last_;
};

/// Writes `line` (JournalLine at the system clock's now) to `out`, flushed.
void WriteJournalLine(std::FILE* out, const std::string& line);

template <typename Kind>
void JournalTurns<Kind>::Write(const std::string& line) {
  WriteJournalLine(out_, line);
}

}  // namespace torchx::composite
