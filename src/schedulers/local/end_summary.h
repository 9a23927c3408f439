// The summary JSON TorchX's local scheduler leaves in an ended app's directory, named SUCCESS
// whatever the app's end. Written by the supervisor when it finishes, and, when the supervisor
// died first, by whoever records that end (its watchdog, or a reader that finds it dead first): the file is also what
// wakes a reader waiting on the app directory (LocalScheduler::WaitForAnyUpdate), so an end the watchdog records is
// seen at once.
#pragma once

#include <string>
#include <vector>

#include "schedulers/local/app_plan.h"
#include "schedulers/local/state_store.h"
#include "torchx/specs/app_state.h"

namespace torchx::schedulers::local {

/// The summary's text, laid out as nlohmann's dump(2) of the object (keys sorted, two-space
/// indents), written as text (a fan-out's has thousands of fields). `records[i]` is the record
/// of `plan.replicas[i]`, or null where there is none.
std::string EndSummaryText(const std::string& app_id, specs::AppState state, double epoch_seconds, const AppPlan& plan,
                           const std::vector<const ReplicaRecord*>& records);

/// Writes `text` to <app_dir>/SUCCESS; best effort (a full disk leaves the store's state to say it).
void WriteEndSummary(const std::string& app_dir, const std::string& text);

/// The summary of `app`, whose supervisor died before it ended, written FAILED with the latest
/// attempt of each replica in `replicas`, before its end is recorded (a reader that sees the state
/// finds the summary). Nothing when the app's plan cannot be read.
void WriteLostAppSummary(const AppRecord& app, const std::vector<ReplicaRecord>& replicas, double epoch_seconds);

}  // namespace torchx::schedulers::local
