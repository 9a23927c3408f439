// For a kind's unit tests: the shared child seam faked over a map of states. A submission
// "runs" at once (RUNNING, or `on_submit`); a test moves a child by setting `states[handle]`.
// Handles are `fake://<session>/<app id>`.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "torchx/schedulers/scheduler.h"
#include "torchx/specs/app_state.h"
#include "torchx/status.h"

namespace torchx::composite {

template <typename Seam>
class FakeChildren : public Seam {
 public:
  explicit FakeChildren(std::string session) : session_(std::move(session)) {}

  std::string HandleOf(const std::string& app_id) const { return "fake://" + session_ + "/" + app_id; }

  Result<std::string> Schedule(const schedulers::DryRunInfo& info) override {
    if (refuse.count(info.app_id)) return UnavailableError("engine down");
    std::string handle = HandleOf(info.app_id);
    submitted.push_back(info.app_id);
    states[handle] = specs::AppState::kRunning;
    return handle;
  }
  Result<std::optional<specs::AppStatus>> Status(const std::string& handle) override {
    auto it = states.find(handle);
    if (it == states.end()) return std::optional<specs::AppStatus>();
    specs::AppStatus s;
    s.state = it->second;
    if (s.state == specs::AppState::kFailed) s.msg = failed_msg;
    return std::optional(s);
  }
  std::vector<Result<std::optional<specs::AppStatus>>> Statuses(const std::vector<std::string>& handles) override {
    ++batches;
    return Seam::Statuses(handles);
  }
  ::torchx::Status Cancel(const std::string& handle) override {
    cancelled.push_back(handle);
    if (states.count(handle) && !specs::IsTerminal(states[handle])) states[handle] = specs::AppState::kCancelled;
    return OkStatus();
  }
  bool WaitForUpdate(const std::string&, std::chrono::milliseconds) override { return false; }

  std::map<std::string, specs::AppState> states;  ///< by handle
  std::vector<std::string> submitted;             ///< app ids, in submission order
  std::vector<std::string> cancelled;             ///< handles
  std::set<std::string> refuse;                   ///< app ids whose submission fails (kUnavailable)
  std::string failed_msg;                         ///< what a FAILED child's status says
  int batches = 0;                                ///< Statuses calls: one per refresh

 private:
  std::string session_;
};

}  // namespace torchx::composite
