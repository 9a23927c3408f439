#include "torchx/schedulers/scheduler.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace torchx::schedulers {

Result<LogStream> ParseLogStream(std::string_view s) {
  if (s == "stdout") return LogStream::kStdout;
  if (s == "stderr") return LogStream::kStderr;
  if (s == "combined") return LogStream::kCombined;
  return InvalidArgumentError(fmt::format("streams: invalid value '{}', must be one of [stdout, stderr, combined]", s));
}

Result<DryRunInfo> Scheduler::SubmitDryRun(const specs::AppDef& app, const specs::ResolvedCfg& cfg) {
  TORCHX_RETURN_IF_ERROR(cfg.CheckResolvedBy(run_opts(), backend_));
  return SubmitResolved(app, cfg);
}

Result<DryRunInfo> Scheduler::SubmitDryRun(const specs::AppDef& app, const specs::Cfg& cfg) {
  TORCHX_ASSIGN_OR_RETURN(specs::ResolvedCfg resolved, run_opts().Resolve(cfg));
  return SubmitResolved(app, resolved);
}

Result<DryRunInfo> Scheduler::SubmitResolved(const specs::AppDef& app, const specs::ResolvedCfg& cfg) {
  TORCHX_ASSIGN_OR_RETURN(DryRunInfo info, DoDryRun(app, cfg));
  for (const auto& [key, value] : cfg.values()) info.cfg.try_emplace(key, value);  // DoDryRun's values win
  info.scheduler = backend_;
  return info;
}

Status Scheduler::Cancel(const std::string& app_id) {
  if (capabilities().Has(Capability::kComposite)) {
    Status s = DoCancel(app_id);
    return s.code() == StatusCode::kNotFound ? OkStatus() : s;
  }
  TORCHX_ASSIGN_OR_RETURN(auto desc, Describe(app_id));
  if (!desc || specs::IsTerminal(desc->state)) return OkStatus();
  return DoCancel(app_id);
}

Status Scheduler::Unsupported(std::string_view what) const {
  return UnimplementedError(fmt::format("scheduler {} does not support {}", backend_, what));
}

Status Scheduler::Delete(const std::string&) { return Unsupported("delete"); }

Result<std::vector<ListAppResponse>> Scheduler::List() { return Unsupported("list"); }

Result<std::optional<DryRunInfo>> Scheduler::DescribeNative(const std::string&) {
  return Unsupported(CapabilityDescription(Capability::kDescribeNative));
}

Result<std::optional<std::string>> Scheduler::CompositeDefinition(const std::string&, bool) {
  return std::optional<std::string>();
}

Result<std::optional<std::string>> Scheduler::CompositeSection(const std::string&) {
  return std::optional<std::string>();
}

Result<std::vector<ReplicaAttempt>> Scheduler::Attempts(const std::string&) { return std::vector<ReplicaAttempt>(); }

Result<std::optional<FailureReport>> Scheduler::ClassifyFailure(const std::string&) {
  return Unsupported(CapabilityDescription(Capability::kFailureClassification));
}

Result<specs::Cfg> Scheduler::RecoveryHandoverCfg(specs::Cfg cfg) const { return cfg; }

std::string_view FailureCauseName(FailureCause c) {
  switch (c) {
    case FailureCause::kUserError:
      return "user_error";
    case FailureCause::kOutOfMemory:
      return "out_of_memory";
    case FailureCause::kNodeFailure:
      return "node_failure";
    case FailureCause::kPreemption:
      return "preemption";
    case FailureCause::kTimeLimit:
      return "time_limit";
    case FailureCause::kEviction:
      return "eviction";
    case FailureCause::kEngineLost:
      return "engine_lost";
    case FailureCause::kSupervisorLost:
      return "supervisor_lost";
    case FailureCause::kCancelled:
      return "cancelled";
    case FailureCause::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::vector<FailureCause> AllFailureCauses() {
  std::vector<FailureCause> out;
  for (unsigned i = 0; i <= static_cast<unsigned>(FailureCause::kUnknown); ++i)
    out.push_back(static_cast<FailureCause>(i));
  return out;
}

Result<FailureCause> ParseFailureCause(std::string_view name, std::string_view what) {
  std::string choices;
  for (FailureCause c : AllFailureCauses()) {
    if (FailureCauseName(c) == name) return c;
    choices += (choices.empty() ? "" : ", ") + std::string(FailureCauseName(c));
  }
  return InvalidArgumentError(fmt::format("{}: unknown cause `{}`; valid choices: {}", what, name, choices));
}

Result<std::optional<AppUsage>> Scheduler::ResourceUsage(const std::string&, const UsageOptions&) {
  return Unsupported(CapabilityDescription(Capability::kResourceUsage));
}

Result<std::optional<std::vector<ProcessStack>>> Scheduler::DumpStacks(const std::string&, const StackOptions&) {
  return Unsupported(CapabilityDescription(Capability::kStacks));
}

Status Scheduler::Profile(const std::string&, const ProfileOptions&) {
  return Unsupported(CapabilityDescription(Capability::kStacks));
}

Result<std::vector<HostInfo>> Scheduler::Hosts() { return Unsupported(CapabilityDescription(Capability::kHosts)); }

Result<std::unique_ptr<LogIterator>> Scheduler::LogIter(const std::string&, const LogOptions&) {
  return Unsupported("logs");
}

Result<bool> LogIterator::NextBatch(const std::function<void(std::string_view)>& sink) {
  TORCHX_ASSIGN_OR_RETURN(std::optional<std::string> line, Next());
  if (!line) return false;
  sink(*line);
  return true;
}

bool Scheduler::WaitForUpdate(const std::string&, std::chrono::milliseconds) { return false; }

bool Scheduler::WaitForAnyUpdate(const std::vector<std::string>& app_ids, std::chrono::milliseconds max_wait) {
  return app_ids.size() == 1 && WaitForUpdate(app_ids[0], max_wait);
}

Status Scheduler::BuildWorkspace(const std::string& workspace, specs::AppDef&, const specs::ResolvedCfg&) {
  return UnimplementedError(
      fmt::format("scheduler {} does not support workspaces (asked to build {})", backend(), workspace));
}

Result<std::string> Scheduler::Helper(std::string_view function, std::string_view) {
  return NotFoundError(fmt::format("scheduler {} has no helper `{}`", backend_, function));
}

Result<specs::Cfg> Scheduler::DependencyCfg(const std::vector<std::string>&, specs::Cfg) const {
  return Unsupported("native dependencies");
}

Result<std::vector<std::string>> Scheduler::ScheduleArray(const std::vector<DryRunInfo>&, int) {
  return Unsupported("job arrays");
}

Result<std::optional<std::string>> Scheduler::FindSubmission(const std::string&) {
  return Unsupported("finding a submission by its key");
}

std::string_view CapabilityName(Capability c) {
  switch (c) {
    case Capability::kLogs:
      return "logs";
    case Capability::kFollowLogs:
      return "follow_logs";
    case Capability::kLogTimestamps:
      return "log_timestamps";
    case Capability::kList:
      return "list";
    case Capability::kDelete:
      return "delete";
    case Capability::kWorkspace:
      return "workspace";
    case Capability::kAttemptHistory:
      return "attempt_history";
    case Capability::kNativeDependencies:
      return "native_dependencies";
    case Capability::kNativeArrays:
      return "native_arrays";
    case Capability::kResourceUsage:
      return "resource_usage";
    case Capability::kFailureClassification:
      return "failure_classification";
    case Capability::kDescribeNative:
      return "describe_native";
    case Capability::kInterruptCancels:
      return "interrupt_cancels";
    case Capability::kFindsSubmission:
      return "finds_submission";
    case Capability::kComposite:
      return "composite";
    case Capability::kStacks:
      return "stacks";
    case Capability::kHosts:
      return "hosts";
  }
  return "unknown";
}

std::string_view CapabilityDescription(Capability c) {
  switch (c) {
    case Capability::kLogs:
      return "logs";
    case Capability::kFollowLogs:
      return "following logs";
    case Capability::kLogTimestamps:
      return "log time ranges";
    case Capability::kList:
      return "listing apps";
    case Capability::kDelete:
      return "deleting apps";
    case Capability::kWorkspace:
      return "workspaces";
    case Capability::kAttemptHistory:
      return "attempt history";
    case Capability::kNativeDependencies:
      return "native dependencies";
    case Capability::kNativeArrays:
      return "job arrays";
    case Capability::kResourceUsage:
      return "resource usage";
    case Capability::kFailureClassification:
      return "failure classification";
    case Capability::kDescribeNative:
      return "native descriptions";
    case Capability::kInterruptCancels:
      return "cancelling on interrupt";
    case Capability::kFindsSubmission:
      return "finding a submission by its key";
    case Capability::kComposite:
      return "composite jobs";
    case Capability::kStacks:
      return "stack dumps and profiles";
    case Capability::kHosts:
      return "a hosts view";
  }
  return "unknown";
}

std::vector<Capability> Capabilities::List() const {
  std::vector<Capability> out;
  for (unsigned i = 0; i < kCapabilityCount; ++i) {
    if (Has(static_cast<Capability>(i))) out.push_back(static_cast<Capability>(i));
  }
  return out;
}

namespace {
class LinesIterator : public LogIterator {
 public:
  explicit LinesIterator(std::vector<std::string> lines) : lines_(std::move(lines)) {}
  Result<std::optional<std::string>> Next() override {
    if (i_ >= lines_.size()) return std::optional<std::string>();
    return std::optional<std::string>(std::move(lines_[i_++]));
  }

 private:
  std::vector<std::string> lines_;
  size_t i_ = 0;
};
}  // namespace

std::unique_ptr<LogIterator> MakeLinesIterator(std::vector<std::string> lines) {
  return std::make_unique<LinesIterator>(std::move(lines));
}

std::string MemberAppToJson(const MemberApp& m) {
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return nlohmann::json{{"name", m.name},
                        {"app_handle", m.app_handle},
                        {"scheduler", m.scheduler},
                        {"state", std::string(specs::AppStateName(m.state))},
                        {"depends_on", m.depends_on},
                        {"submitted", opt(m.submitted)},
                        {"ended", opt(m.ended)},
                        {"msg", m.msg}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace torchx::schedulers
