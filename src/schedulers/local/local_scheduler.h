// local_cwd: runs each replica as a local process in the submitter's working directory, owned by
// a detached per-app supervisor, with state in SQLite so that any later process (CLI or Python,
// any terminal) can status / wait / log / cancel / list / describe / delete the app.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schedulers/local/app_plan.h"
#include "schedulers/local/process_starter.h"
#include "schedulers/local/state_store.h"
#include "schedulers/local/warm_supervisor.h"
#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers::local {

/// Path of the torchx-supervisor executable: $TORCHX_SUPERVISOR, next to the running executable
/// or library, the build tree, the install prefix's libexec, then $PATH.
Result<std::string> FindSupervisor();

class LocalScheduler : public Scheduler {
 public:
  /// `devices`: where the `device` option finds device plugins (may be null: none). `starter`:
  /// what starts an app's processes (process_starter.h; null: the operating system's).
  LocalScheduler(std::string backend, std::string session_name, std::string default_state_dir,
                 const devices::DeviceSource* devices = nullptr, std::shared_ptr<ProcessStarter> starter = nullptr);

  specs::RunOpts run_opts() const override;
  Result<std::string> Helper(std::string_view function, std::string_view args_json) override;
  // Its state is in its engine (or on disk): a thread may have an instance of its own.
  bool instance_per_thread() const override { return true; }
  Capabilities capabilities() const override {
    return {Capability::kLogs,
            Capability::kFollowLogs,
            Capability::kList,
            Capability::kDelete,
            Capability::kAttemptHistory,
            Capability::kDescribeNative,
            Capability::kResourceUsage,
            Capability::kFailureClassification,
            Capability::kInterruptCancels,
            Capability::kStacks,
            Capability::kHosts};
  }
  /// ClassifyLocalEnd over the store's record (a dead supervisor found first, as Describe does).
  Result<std::optional<FailureReport>> ClassifyFailure(const std::string& app_id) override;
  /// Replicas are local processes: resources are not enforced, so none is required (TorchX).
  bool requires_resources() const override { return false; }
  Result<std::string> Schedule(const DryRunInfo& info) override;
  Result<std::optional<DescribeAppResponse>> Describe(const std::string& app_id) override;
  /// The plan the supervisor runs, as the store holds it (what the dry run printed, ids filled in).
  Result<std::optional<DryRunInfo>> DescribeNative(const std::string& app_id) override;
  Status Delete(const std::string& app_id) override;
  Result<std::vector<ListAppResponse>> List() override;
  Result<std::vector<ReplicaAttempt>> Attempts(const std::string& app_id) override;
  /// What the app's supervisor sampled (every `resource_interval` seconds), every replica listed.
  Result<std::optional<AppUsage>> ResourceUsage(const std::string& app_id, const UsageOptions& options) override;
  /// Each replica's processes (its leader, a torchrun agent's workers), dumped with py-spy.
  Result<std::optional<std::vector<ProcessStack>>> DumpStacks(const std::string& app_id,
                                                              const StackOptions& options) override;
  /// The replica's first Python process (its leader, or torchrun's agent) and its subprocesses.
  Status Profile(const std::string& app_id, const ProfileOptions& options) override;
  /// This host (ReadThisHost), with every app of the store that has a replica running.
  Result<std::vector<HostInfo>> Hosts() override;
  Result<std::unique_ptr<LogIterator>> LogIter(const std::string& app_id, const LogOptions& options) override;
  /// Woken by the supervisor writing the app's summary file when the app ends (inotify).
  bool WaitForUpdate(const std::string& app_id, std::chrono::milliseconds max_wait) override;
  /// The same for several apps, with one inotify instance watching each app's directory.
  bool WaitForAnyUpdate(const std::vector<std::string>& app_ids, std::chrono::milliseconds max_wait) override;

 protected:
  Result<DryRunInfo> DoDryRun(const specs::AppDef& app, const specs::ResolvedCfg& cfg) override;
  Status DoCancel(const std::string& app_id) override;

 private:
  struct Found {
    StateStore* store;
    AppRecord app;
  };
  Result<StateStore*> Store(const std::string& state_dir);
  Result<std::string> ScheduleDetached(StateStore& store, const std::string& supervisor, const std::string& state_dir,
                                       const AppPlan& plan, AppRecord rec, std::string context);
  /// A small app handed to an idle supervisor this scheduler started (warm_supervisor.h).
  Result<std::string> ScheduleWarm(StateStore& store, const std::string& supervisor, const std::string& state_dir,
                                   const AppPlan& plan, WarmSupervisors::Entry warm, AppRecord rec,
                                   std::string context);
  /// An app recorded SUBMITTED, started by a new supervisor process (a large app's way).
  Result<std::string> SpawnSupervisor(StateStore& store, const std::string& supervisor, const std::string& state_dir,
                                      const std::string& app_id);
  Result<std::optional<Found>> Find(const std::string& app_id);
  /// Marks a non-terminal app whose supervisor is gone (killed, or the host rebooted) as FAILED
  /// with the reason, and stops its replicas. Re-reads the record.
  Status CheckLiveness(StateStore& store, AppRecord& app);

  std::string default_state_dir_;
  const devices::DeviceSource* devices_;
  std::map<std::string, std::unique_ptr<StateStore>> stores_;
  std::string supervisor_;  // FindSupervisor's answer, once found
  // The last dry run's request and the plan it was made from: Schedule of that request (what `run`
  // does) takes the plan as is instead of parsing it back; an edited request is parsed.
  std::string planned_payload_;
  std::optional<AppPlan> planned_;
  std::shared_ptr<ProcessStarter> starter_;
  WarmSupervisors warm_;  // the small apps' supervisors, which take this process's next apps
};

/// local_cwd and its alias local, for the build's table of linked-in back-ends.
std::vector<SchedulerEntry> BackendSchedulers();

}  // namespace torchx::schedulers::local
