#include "torchx/schedulers/scheduler.h"

#include "schedulers/docker/docker_scheduler.h"
#include "schedulers/kubernetes/kubernetes_scheduler.h"
#include "schedulers/local/local_scheduler.h"
#include "schedulers/slurm/slurm_scheduler.h"

#include <thread>

#include <fmt/format.h>

#include "core/spelling.h"

namespace torchx::schedulers {

Result<LogStream> ParseLogStream(std::string_view s) {
  if (s == "stdout") return LogStream::kStdout;
  if (s == "stderr") return LogStream::kStderr;
  if (s == "combined") return LogStream::kCombined;
  return InvalidArgumentError(
      fmt::format("streams: invalid value '{}', must be one of [stdout, stderr, combined]", s));
}

Result<DryRunInfo> Scheduler::SubmitDryRun(const specs::AppDef& app, const specs::Cfg& cfg) {
  TORCHX_ASSIGN_OR_RETURN(specs::Cfg resolved, run_opts().Resolve(cfg));
  TORCHX_ASSIGN_OR_RETURN(DryRunInfo info, DoDryRun(app, resolved));
  info.scheduler = backend_;
  return info;
}

Result<bool> Scheduler::Exists(const std::string& app_id) {
  TORCHX_ASSIGN_OR_RETURN(auto desc, Describe(app_id));
  return desc.has_value();
}

Status Scheduler::Cancel(const std::string& app_id) {
  TORCHX_ASSIGN_OR_RETURN(auto desc, Describe(app_id));
  if (!desc || specs::IsTerminal(desc->state)) return OkStatus();
  return DoCancel(app_id);
}

Status Scheduler::Unsupported(std::string_view what) const {
  return UnimplementedError(fmt::format("scheduler {} does not support {}", backend_, what));
}

Status Scheduler::Delete(const std::string&) { return Unsupported("delete"); }

Result<std::vector<ListAppResponse>> Scheduler::List() { return Unsupported("list"); }

Result<std::unique_ptr<LogIterator>> Scheduler::LogIter(const std::string&, const LogOptions&) {
  return Unsupported("logs");
}

void Scheduler::WaitForUpdate(const std::string&, std::chrono::milliseconds max_wait) {
  std::this_thread::sleep_for(max_wait);
}

Status SchedulerRegistry::Register(std::string name, SchedulerFactory factory) {
  if (Contains(name)) return AlreadyExistsError(fmt::format("scheduler {} is already registered", name));
  factories_.emplace_back(std::move(name), std::move(factory));
  return OkStatus();
}

bool SchedulerRegistry::Contains(std::string_view name) const {
  for (const auto& [n, _] : factories_) {
    if (n == name) return true;
  }
  return false;
}

std::vector<std::string> SchedulerRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [n, _] : factories_) names.push_back(n);
  return names;
}

Result<std::unique_ptr<Scheduler>> SchedulerRegistry::Create(std::string_view name,
                                                             const std::string& session_name) const {
  for (const auto& [n, factory] : factories_) {
    if (n == name) return factory(session_name);
  }
  return NotFoundError(fmt::format("scheduler: unknown scheduler `{}`.{}", name,
                                   internal::SuggestionSuffix(name, Names())));
}

Status Scheduler::BuildWorkspace(const std::string& workspace, specs::AppDef&, const specs::Cfg&) {
  return UnimplementedError(fmt::format("{}: workspaces are not supported (asked to build {}); local_docker builds "
                                        "them, slurm copies one with -cfg job_dir=...",
                                        backend(), workspace));
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

// The built-in back-ends (the first is the CLI default).
void RegisterBuiltinSchedulers(SchedulerRegistry& registry) {
  // local_cwd stays the default (TorchX's is local_docker, which fails without a running engine).
  local::RegisterLocalSchedulers(registry);
  (void)registry.Register("local_docker", [](const std::string& session) -> Result<std::unique_ptr<Scheduler>> {
    return docker::MakeDockerScheduler(session);
  });
  (void)registry.Register("slurm", [](const std::string& session) -> Result<std::unique_ptr<Scheduler>> {
    return slurm::MakeSlurmScheduler(session);
  });
  (void)registry.Register("kubernetes", [](const std::string& session) -> Result<std::unique_ptr<Scheduler>> {
    return kubernetes::MakeKubernetesScheduler(session);
  });
}

}  // namespace torchx::schedulers
