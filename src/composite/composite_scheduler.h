// The one Scheduler facade of every composite kind: a composite's handle answers status, wait,
// list, describe, cancel and delete like any app's, from its record and its children's
// schedulers; `torchx run -s KIND` is refused. Generic over a Kind (the kind's record, store and
// child seam, and the few functions that are its own); a kind's scheduler derives from
// CompositeSchedulerOf<Kind> only to add what is its alone (its log, its describe sections).
//
// A Kind provides:
//   using Record (derives RecordHeader), Child (derives ChildRecord), Store (RecordStore of
//     Record, built from its directory), Backend (derives ChildBackend);
//   kNames (KindNames: its scheduler's name, noun, directory, verb), MakeBackend(runner);
//   kChildren (a member pointer to its children, in order: &Record::steps), Label(child) ("steps.train": errors name
//   it),
//     Member(record, child), LiveState(record), Restarts(record);
//   HasDriver(record) (false where the child's scheduler sequences everything itself);
//   WithoutDriver(store, id, backend, why): the record once no driver can move it (what is left
//     marked not run, or a turn taken here);
//   Describe(record, backend, runner), Cancel(store, state_dir, id, backend),
//     RemoveOwnFiles(record) (what a delete removes besides the record and the children);
//   for its driver, DriverRunnerOptions(record) and StartTurns(store, id, backend, record).
// KindOf gives the type names and the defaults most kinds keep.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "composite/child_ops.h"
#include "composite/children.h"
#include "composite/driver_loop.h"
#include "composite/driver_process.h"
#include "composite/fault_points.h"
#include "composite/journal.h"
#include "core/state_dir.h"
#include "schedulers/log_file_reader.h"
#include "torchx/plugins/registry.h"
#include "torchx/runner/runner.h"
#include "torchx/schedulers/scheduler.h"
#include "torchx/specs/app_handle.h"

namespace torchx::composite {

/// What a kind is called: its scheduler's name (and its driver's kind argument), what its records
/// are called in messages ("pipeline"; "pipelines" as the directory under the state directory),
/// and the verb that runs one, which the refusal of `torchx run -s <name>` names.
struct KindNames {
  std::string_view scheduler;
  std::string_view noun;
  std::string_view dir;
  std::string_view verb;
};

/// What a Kind derives from (CRTP: `struct PipelineKind : KindOf<PipelineKind, ...>`): its types,
/// and the defaults a kind overrides by declaring its own. `Kind::kNames` and `Kind::kChildren`
/// are the kind's.
template <typename Kind, typename RecordT, typename ChildT, typename StoreT, typename BackendT>
struct KindOf {
  using Record = RecordT;
  using Child = ChildT;
  using Store = StoreT;
  using Backend = BackendT;
  /// <state_dir>/<kNames.dir>.
  static std::string Dir(const std::string& state_dir) {
    return (std::filesystem::path(state_dir) / Kind::kNames.dir).string();
  }
  /// RUNNING once a child runs or has ended, PENDING before; the final state once there is one.
  static specs::AppState LiveState(const Record& r) { return LiveStateOf(r, r.*Kind::kChildren); }
  /// Recoveries: none unless the kind recovers its children.
  static int Restarts(const Record&) { return 0; }
  /// Every composite has a driver unless its scheduler sequences the children itself.
  static bool HasDriver(const Record&) { return true; }
  /// Nothing of the kind's own outside its record.
  static void RemoveOwnFiles(const Record&) {}
  /// The driver's Runner: the composite's session, the system clock.
  static runner::RunnerOptions DriverRunnerOptions(const Record& r) { return ChildRunnerOptions(r.session, nullptr); }
};

/// The record of composite `id`, brought up to date, and moving again if nothing moves it: a
/// driver holds its lock (the record as it is); else the driver died (a reboot, kill -9) before
/// the composite ended and a new one is started, which goes on from the record; if none can start
/// (or the kind has none), the kind says what becomes of it.
template <typename Kind>
Result<std::optional<typename Kind::Record>> CurrentRecord(typename Kind::Store& store, const std::string& state_dir,
                                                           const std::string& id, typename Kind::Backend& backend) {
  TORCHX_ASSIGN_OR_RETURN(auto record, store.Get(id));
  if (!record || record->final_state || DriverRunning(store.dir(), id)) return record;
  std::string why;
  if (Kind::HasDriver(*record)) {
    Status started = StartDriver(state_dir, store.dir(), id, record->cwd, std::string(Kind::kNames.scheduler));
    if (started.ok()) return record;
    why = fmt::format("the {}'s driver cannot start: {}", Kind::kNames.noun, started.message());
  }
  return Kind::WithoutDriver(store, id, backend, why);
}

/// The record `handle` names (`<kind>://<session>/<id>`), brought up to date as CurrentRecord
/// does, its children reached through `runner`: kInvalidArgument for another kind's handle,
/// kNotFound for an unknown id.
template <typename Kind>
Result<typename Kind::Record> RecordOfHandle(runner::Runner& runner, const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(specs::ParsedAppHandle parsed, specs::ParseAppHandle(handle));
  if (parsed.scheduler_backend != Kind::kNames.scheduler) {
    return InvalidArgumentError(fmt::format("{}: not a {} handle ({}://<session>/<id>)", handle, Kind::kNames.scheduler,
                                            Kind::kNames.scheduler));
  }
  std::string state_dir = internal::DefaultStateDir();
  typename Kind::Store store(Kind::Dir(state_dir));
  auto backend = Kind::MakeBackend(runner);
  TORCHX_ASSIGN_OR_RETURN(auto record, CurrentRecord<Kind>(store, state_dir, parsed.app_id, *backend));
  if (!record) return NotFoundError(fmt::format("{} {} does not exist", Kind::kNames.noun, handle));
  return std::move(*record);
}

template <typename Kind>
class CompositeSchedulerOf : public schedulers::Scheduler {
 public:
  using Record = typename Kind::Record;
  using Child = typename Kind::Child;

  CompositeSchedulerOf(plugins::PluginRegistry& registry, const schedulers::SchedulerContext& context)
      : Scheduler(std::string(Kind::kNames.scheduler), context.session_name),
        registry_(registry),
        clock_(context.clock),
        state_dir_(internal::DefaultStateDir()),
        store_(Kind::Dir(state_dir_)),
        runner_(registry, ChildRunnerOptions(context.session_name, context.clock)),
        backend_(Kind::MakeBackend(runner_)) {}

  specs::RunOpts run_opts() const override { return {}; }
  // Its state is on disk: a thread may have an instance of its own.
  bool instance_per_thread() const override { return true; }
  schedulers::Capabilities capabilities() const override {
    using schedulers::Capability;
    return {Capability::kLogs,   Capability::kFollowLogs, Capability::kList,
            Capability::kDelete, Capability::kComposite,  Capability::kResourceUsage};
  }
  bool requires_resources() const override { return false; }

  Result<std::string> Schedule(const schedulers::DryRunInfo&) override { return Refusal(); }

  Result<std::optional<schedulers::DescribeAppResponse>> Describe(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(auto record, Current(app_id));
    if (!record) return std::optional<schedulers::DescribeAppResponse>();
    return std::optional(Kind::Describe(*record, *backend_, runner_));
  }

  Result<std::vector<schedulers::ListAppResponse>> List() override {
    TORCHX_ASSIGN_OR_RETURN(auto records, store_.List());
    std::vector<schedulers::ListAppResponse> out;
    out.reserve(records.size());
    for (Record& r : records) {
      if (!r.final_state) {
        auto current = Current(r.id);
        if (current && *current) r = std::move(**current);
      }
      schedulers::ListAppResponse l;
      l.app_id = r.id;
      l.name = r.name;
      l.state = Kind::LiveState(r);
      l.created = r.created;
      l.num_restarts = Kind::Restarts(r);
      const auto& children = r.*Kind::kChildren;
      if (r.final_state) {
        for (const Child& c : children) {
          if (c.ended) l.ended = std::max(l.ended.value_or(r.created), *c.ended);
        }
        if (*r.final_state != specs::AppState::kSucceeded) l.reason = r.msg;
      }
      l.members.reserve(children.size());
      for (const Child& c : children) l.members.push_back(Kind::Member(r, c));
      out.push_back(std::move(l));
    }
    return out;
  }

  // The children's own records go too (where their schedulers keep any), as deleting an app does.
  Status Delete(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(auto record, Current(app_id));
    if (!record) return NotFoundError(fmt::format("{} {} does not exist", Kind::kNames.noun, app_id));
    if (!record->final_state) {
      return FailedPreconditionError(fmt::format("{} {} is {}: cancel it first", Kind::kNames.noun, app_id,
                                                 specs::AppStateName(Kind::LiveState(*record))));
    }
    std::vector<LabelledChild> children;
    for (const Child& c : (*record).*Kind::kChildren) children.push_back({Kind::Label(c), c.handle});
    TORCHX_RETURN_IF_ERROR(DeleteChildren(children, [&](const std::string& h) { return runner_.Delete(h); }));
    Kind::RemoveOwnFiles(*record);
    return store_.Remove(app_id);
  }

  // The composite's own log is its driver's (`torchx log H --driver`); the others are its
  // children's, which the kind finds (MemberLog).
  Result<std::unique_ptr<schedulers::LogIterator>> LogIter(const std::string& app_id,
                                                           const schedulers::LogOptions& options) final {
    if (options.driver) return DriverLog(app_id, options.follow);
    return MemberLog(app_id, options);
  }

  // The figures of its running children (`top`, `status --resources`, the page's resources card),
  // each replica named after its child ("trial 3/trainer"); an ended child's are on its own page.
  // A child whose scheduler keeps none is counted in the note.
  Result<std::optional<schedulers::AppUsage>> ResourceUsage(const std::string& app_id,
                                                            const schedulers::UsageOptions& options) override {
    TORCHX_ASSIGN_OR_RETURN(auto record, store_.Get(app_id));
    if (!record) return std::optional<schedulers::AppUsage>();
    schedulers::AppUsage out;
    int running = 0;
    std::vector<std::string> without;
    for (const Child& c : (*record).*Kind::kChildren) {
      if (c.phase != ChildPhase::kSubmitted || specs::IsTerminal(c.state)) continue;
      ++running;
      auto usage = runner_.ResourceUsage(c.handle, options);
      if (!usage && usage.error().code() != StatusCode::kUnimplemented) {  // not "keeps none": say why
        without.push_back(fmt::format("{} ({})", Kind::Label(c), usage.error().message()));
        continue;
      }
      if (!usage || !*usage) {
        without.push_back(Kind::Label(c));
        continue;
      }
      for (schedulers::ReplicaUsage& replica : (*usage)->replicas) {
        replica.role = Kind::Label(c) + "/" + replica.role;
        out.replicas.push_back(std::move(replica));
      }
      for (schedulers::HostUsage& host : (*usage)->hosts) {  // a host's GPUs once, however many children share it
        auto same = [&host](const schedulers::HostUsage& h) { return h.host == host.host; };
        if (std::none_of(out.hosts.begin(), out.hosts.end(), same)) out.hosts.push_back(std::move(host));
      }
      out.interval_seconds = std::max(out.interval_seconds, (*usage)->interval_seconds);
      if (out.gpu_note.empty()) out.gpu_note = (*usage)->gpu_note;
    }
    if (running == 0) {
      out.note = fmt::format("no child of this {} is running", Kind::kNames.noun);
    } else if (!without.empty()) {
      out.note = fmt::format("{} of {} running children have no figures: {}", without.size(), running,
                             fmt::join(without, ", "));
    }
    return std::optional(std::move(out));
  }

  // A running child's scheduler is waited on: the composite changes when one of them does.
  bool WaitForUpdate(const std::string& app_id, std::chrono::milliseconds max_wait) override {
    auto record = store_.Get(app_id);
    if (!record || !*record || (*record)->final_state) return false;
    for (const Child& c : (**record).*Kind::kChildren) {
      if (c.phase == ChildPhase::kSubmitted && !specs::IsTerminal(c.state)) {
        backend_->WaitForUpdate(c.handle, max_wait);
        return true;
      }
    }
    return false;
  }

 protected:
  Result<schedulers::DryRunInfo> DoDryRun(const specs::AppDef&, const specs::ResolvedCfg&) override {
    return Refusal();
  }
  Status DoCancel(const std::string& app_id) override { return Kind::Cancel(store_, state_dir_, app_id, *backend_); }

  /// The log of the child `options.role` names, as the kind's Describe names its roles.
  virtual Result<std::unique_ptr<schedulers::LogIterator>> MemberLog(const std::string& app_id,
                                                                     const schedulers::LogOptions& options) = 0;

  Result<std::optional<Record>> Current(const std::string& id) {
    return CurrentRecord<Kind>(store_, state_dir_, id, *backend_);
  }

  // Followed until the composite ends, each look through its record (CurrentRecord), so a dead
  // driver is started again rather than waited on for ever.
  Result<std::unique_ptr<schedulers::LogIterator>> DriverLog(const std::string& app_id, bool follow) {
    TORCHX_ASSIGN_OR_RETURN(auto record, store_.Get(app_id));
    if (!record) return NotFoundError(fmt::format("{} {} does not exist", Kind::kNames.noun, app_id));
    if (!Kind::HasDriver(*record)) {
      return FailedPreconditionError(
          fmt::format("{} {} has no driver log: its children's scheduler runs it alone", Kind::kNames.noun, app_id));
    }
    // Built once for the follow (the store keeps the record it last read: a look at an unchanged
    // record is not a parse); a look that fails is not the end.
    struct Looker {
      runner::Runner runner;
      typename Kind::Store store;
      std::unique_ptr<typename Kind::Backend> backend;
      Looker(plugins::PluginRegistry& registry, const std::string& session, const std::string& state_dir)
          : runner(registry, ChildRunnerOptions(session, nullptr)),
            store(Kind::Dir(state_dir)),
            backend(Kind::MakeBackend(runner)) {}
    };
    auto looker = std::make_shared<Looker>(registry_, session_name(), state_dir_);
    auto ended = [looker, state_dir = state_dir_, id = app_id] {
      auto current = CurrentRecord<Kind>(looker->store, state_dir, id, *looker->backend);
      return current && (!*current || (*current)->final_state.has_value());  // gone: deleted
    };
    return schedulers::MakeLogFileReader(DriverLogPath(store_.dir(), app_id), follow, std::move(ended));
  }
  static Status Refusal() {
    return InvalidArgumentError(fmt::format("scheduler `{}` runs {}s, not single apps: use {}", Kind::kNames.scheduler,
                                            Kind::kNames.noun, Kind::kNames.verb));
  }

  plugins::PluginRegistry& registry_;
  std::shared_ptr<const Clock> clock_;
  std::string state_dir_;
  typename Kind::Store store_;
  runner::Runner runner_;
  std::unique_ptr<typename Kind::Backend> backend_;
};

/// The driver turns of a kind whose children a policy advances (pipelines, sweeps): each turn
/// `advance` (refresh the children, decide, submit: the kind's), then
/// - claims still open after a turn (none of this driver's is in flight between turns: a dead
///   driver's, waiting for a start that may still be recorded, or this driver's whose handles could
///   not be recorded) are resolved by `resolve_claims`, and the driver idles;
/// - once, when it first sees a cancel, every child still running is cancelled again, in case the
///   canceller's own cancel failed or missed one recorded while it ran (idempotent);
/// - it waits on a running child.
template <typename Kind>
class AdvancingTurns final : public DriverTurns {
 public:
  using Record = typename Kind::Record;
  AdvancingTurns(typename Kind::Store& store, std::string id, typename Kind::Backend& backend,
                 std::function<Result<Record>()> advance, std::function<Status()> resolve_claims)
      : store_(store),
        id_(std::move(id)),
        backend_(backend),
        advance_(std::move(advance)),
        resolve_claims_(std::move(resolve_claims)) {}

  Result<TurnResult> Turn() override {
    TORCHX_ASSIGN_OR_RETURN(Record r, advance_());
    if (r.final_state) return TurnResult::Ended();
    const auto& children = r.*Kind::kChildren;
    for (const auto& c : children) {
      if (c.phase != ChildPhase::kSubmitting) continue;
      TORCHX_RETURN_IF_ERROR(resolve_claims_());
      return TurnResult{};  // the next turn after an idle
    }
    if (r.cancel_requested && !swept_) {
      swept_ = true;
      for (const auto& c : children) {
        if (c.phase == ChildPhase::kSubmitted) (void)backend_.Cancel(c.handle);
      }
    }
    TurnResult out;
    int running = 0;
    for (const auto& c : children) {
      if (c.phase != ChildPhase::kSubmitted || specs::IsTerminal(c.state)) continue;
      if (++running == 1) out.wait_on = c.handle;
      out.running.push_back(c.handle);
    }
    out.sole_child = running == 1;
    return out;
  }
  bool WaitForUpdate(const std::string& handle, std::chrono::milliseconds max_wait) override {
    return backend_.WaitForUpdate(handle, max_wait);
  }
  bool WaitForAnyUpdate(const std::vector<std::string>& handles, std::chrono::milliseconds max_wait) override {
    return backend_.WaitForAnyUpdate(handles, max_wait);
  }

 private:
  typename Kind::Store& store_;
  std::string id_;
  typename Kind::Backend& backend_;
  std::function<Result<Record>()> advance_;
  std::function<Status()> resolve_claims_;
  bool swept_ = false;
};

/// Adds the kind's scheduler (`Facade`, a CompositeSchedulerOf<Kind> or what derives from it) to
/// `registry`, as a composite one.
template <typename Facade>
void RegisterComposite(plugins::PluginRegistry& registry, std::string_view name) {
  (void)registry.AddCompositeScheduler(
      std::string(name), "builtin",
      [&registry](const schedulers::SchedulerContext& context) -> Result<std::unique_ptr<schedulers::Scheduler>> {
        return std::unique_ptr<schedulers::Scheduler>(std::make_unique<Facade>(registry, context));
      });
}

/// The body of the kind's driver for composite `id`: its lock taken (another driver holding it
/// ends this one), its record read, then `Kind::StartTurns(store, id, backend, record)` (what
/// must be settled before the launcher is told the driver is up, and the kind's turns), then the
/// driver loop until the composite ends.
template <typename Kind>
int RunDriverOf(plugins::PluginRegistry& registry, const std::string& state_dir, const std::string& id, int ready_fd) {
  typename Kind::Store store(Kind::Dir(state_dir));
  DriverStart start(std::string(Kind::kNames.scheduler), id, ready_fd);
  auto lock = start.TakeLock(store.dir());
  if (!lock) return start.exit_code();
  auto wanted = [&store, &id] {
    auto record = store.Get(id);
    return !record || (*record && !(*record)->final_state);  // unreadable now: still wanted
  };
  // The driver runs under a watchdog that replaces it if it is killed (RunWatched).
  return RunWatched(
      start,
      [&](DriverStart& mine) {
        std::optional<runner::Runner> runner;
        std::unique_ptr<typename Kind::Backend> backend;
        Result<std::unique_ptr<DriverTurns>> turns = InternalError("no turns");
        {  // the record read at the start is let go of before the loop: the store keeps its own
          auto record = store.Get(id);
          if (!record) return mine.Fail(record.error().message());
          if (!*record) return mine.Fail("does not exist");
          runner.emplace(registry, Kind::DriverRunnerOptions(**record));
          backend = Kind::MakeBackend(*runner);
          ArmFaultPoints();  // a driver may die while it settles a dead driver's claims, too
          turns = Kind::StartTurns(store, id, *backend, **record);
        }
        if (!turns) return mine.Fail(turns.error().message());
        mine.Ready();
        FaultPoint("driver_started");
        JournalTurns<Kind> journal(store, id, std::move(*turns), static_cast<long>(::getpid()));
        SystemClock clock;
        return RunDriverLoop(journal, clock, "torchx-composite-driver");
      },
      wanted);
}

}  // namespace torchx::composite
