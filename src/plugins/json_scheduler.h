// A Scheduler whose back-end speaks JSON (plugin_abi.h's scheduler forms) through a channel: a
// native plugin's C functions, a Python scheduler object in this process (the extension), or a
// Python scheduler in a bridge process (the CLI). The channel carries calls; this class turns
// them into the core's types.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torchx/schedulers/scheduler.h"
#include "torchx/specs/runopts.h"

namespace torchx::plugins {

class JsonSchedulerChannel {
 public:
  virtual ~JsonSchedulerChannel() = default;
  /// {"app", "cfg", "app_id", "session_name"} -> {"request": printable, "payload": string}
  virtual Result<std::string> DryRun(const std::string& request_json) = 0;
  virtual Result<std::string> Schedule(const std::string& payload) = 0;
  /// AppStatus JSON, or "null" when the app is unknown.
  virtual Result<std::string> Describe(const std::string& app_id) = 0;
  virtual Status Cancel(const std::string& app_id) = 0;
  /// [{"app_id", "state", "name"}]; kUnimplemented when the back-end cannot list.
  virtual Result<std::string> List() = 0;
  /// {"app_id", "role", "k"} -> the replica's log text; kUnimplemented when it has none.
  virtual Result<std::string> Logs(const std::string& request_json) = 0;
};

/// The protocol's describe answer ("null", or AppStatus JSON with an optional "app": the AppDef as
/// submitted) as the core's; kInvalidArgument naming `backend` for malformed JSON.
Result<std::optional<schedulers::DescribeAppResponse>> DescribeFromJson(std::string_view backend,
                                                                        const std::string& app_id,
                                                                        const std::string& text);
/// The protocol's list answer ([{"app_id", "state" (int or name), "name"}]).
Result<std::vector<schedulers::ListAppResponse>> ListFromJson(std::string_view backend, const std::string& text);

std::unique_ptr<schedulers::Scheduler> MakeJsonScheduler(std::string backend, std::string session, specs::RunOpts opts,
                                                         std::unique_ptr<JsonSchedulerChannel> channel,
                                                         schedulers::Capabilities capabilities);

}  // namespace torchx::plugins
