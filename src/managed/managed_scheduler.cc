// The "managed" scheduler: managed handles answer status / wait / log / cancel / list / describe /
// delete like any app's, from the run's record and its attempts' schedulers. A record no driver
// moves (the driver died) gets a new driver at the first call that reads it.
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "composite/child_ops.h"
#include "composite/composite_scheduler.h"
#include "core/json_yaml.h"
#include "core/state_dir.h"
#include "managed/driver.h"
#include "managed/kind.h"
#include "managed/policy.h"
#include "managed/record.h"
#include "torchx/managed/managed.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/serialize.h"

namespace torchx::managed {
namespace {

namespace fs = std::filesystem;
using schedulers::DescribeAppResponse;
using schedulers::DryRunInfo;
using schedulers::ListAppResponse;
using schedulers::MemberApp;
using specs::AppState;

MemberApp AttemptMember(const ManagedRecord& r, const AttemptRecord& a) {
  const TargetRecord& target = r.targets[a.target];
  MemberApp m = composite::MemberOf(a, fmt::format("attempt-{}", a.index), target.scheduler, target.cfg_json);
  if (a.index > 0) m.depends_on = {fmt::format("attempt-{}", a.index - 1)};  // the timeline
  m.msg = a.why;
  if (!a.cause.empty()) m.msg += fmt::format("; ended: {}{}", a.cause, a.msg.empty() ? "" : ": " + a.msg);
  return m;
}

std::string RunMessage(const ManagedRecord& r) {
  if (r.final_state) return r.msg;
  std::string out;
  if (!r.attempts.empty()) {
    const AttemptRecord& a = r.attempts.back();
    out = fmt::format("attempt {} on {} ({})", a.index, r.targets[a.target].label, a.why);
  }
  int recoveries = RecoveryCount(r);
  if (recoveries > 0) {
    std::vector<std::string> causes;  // why each attempt before the current one ended
    for (size_t i = 0; i + 1 < r.attempts.size(); ++i) {
      if (!r.attempts[i].cause.empty()) causes.push_back(r.attempts[i].cause);
    }
    out +=
        fmt::format("; {} recover{} so far ({})", recoveries, recoveries == 1 ? "y" : "ies", fmt::join(causes, ", "));
  }
  if (!r.msg.empty()) out += (out.empty() ? "" : "; ") + r.msg;
  return out;
}

// `role` of the app, or the error naming the roles there are.
Status CheckRole(const ManagedRecord& r, const std::string& role) {
  auto app = specs::AppDefFromJson(r.app_json);
  if (!app) return app.error();
  std::string names;
  for (const specs::Role& x : app->roles) {
    if (x.name == role) return OkStatus();
    names += (names.empty() ? "" : ", ") + x.name;
  }
  return NotFoundError(fmt::format("managed job {} has no role `{}`; its roles: {}", r.id, role, names));
}

}  // namespace

std::string ManagedKind::Label(const AttemptRecord& a) { return fmt::format("attempt {}", a.index); }
schedulers::MemberApp ManagedKind::Member(const Record& r, const AttemptRecord& a) { return AttemptMember(r, a); }
specs::AppState ManagedKind::LiveState(const Record& r) { return managed::LiveState(r); }
int ManagedKind::Restarts(const Record& r) { return RecoveryCount(r); }

Result<std::optional<ManagedRecord>> ManagedKind::WithoutDriver(Store& store, const std::string& id, Backend& backend,
                                                                const std::string& why) {
  auto taken = composite::DriverLock::TryTake(store.dir(), id);
  if (!taken || !*taken) return store.Get(id);
  TORCHX_RETURN_IF_ERROR(ResumeSubmitting(store, id, backend, composite::EpochNow()));
  TORCHX_ASSIGN_OR_RETURN(ManagedRecord r, Turn(store, id, backend, composite::EpochNow()));
  if (!r.final_state) r.msg = why;
  return std::optional(std::move(r));
}

DescribeAppResponse ManagedKind::Describe(const Record& r, Backend&, runner::Runner& runner) {
  DescribeAppResponse d;
  d.app_id = r.id;
  d.state = LiveState(r);
  d.msg = RunMessage(r);
  d.num_restarts = RecoveryCount(r);
  auto app = specs::AppDefFromJson(r.app_json);
  if (app) d.app = std::move(*app);
  for (const AttemptRecord& a : r.attempts) d.members.push_back(AttemptMember(r, a));
  // The replicas are the current attempt's.
  for (auto it = r.attempts.rbegin(); it != r.attempts.rend(); ++it) {
    if (it->handle.empty()) continue;
    if (auto st = runner.Status(it->handle); st && *st) {
      d.roles_statuses = (*st)->roles;
      // The driver records a state change at its next turn; a live attempt's is read now. An
      // attempt that ended is left to the driver (a failure it recovers is not the run's end).
      if (!r.final_state && &*it == &r.attempts.back() && !specs::IsTerminal((*st)->state)) d.state = (*st)->state;
      if (d.state == AppState::kFailed && (*st)->structured_error_msg != "<NONE>") {
        d.structured_error_msg = (*st)->structured_error_msg;
      }
    }
    break;
  }
  return d;
}

Status ManagedKind::Cancel(Store& store, const std::string& state_dir, const std::string& id, Backend& backend) {
  TORCHX_ASSIGN_OR_RETURN(auto r, store.Update(id, [](ManagedRecord& cur) {
    if (!cur.final_state) cur.cancel_requested = true;
    return OkStatus();
  }));
  if (!r.final_state && !r.attempts.empty() && r.attempts.back().phase == ChildPhase::kSubmitted) {
    TORCHX_RETURN_IF_ERROR(backend.Cancel(r.attempts.back().handle));
  }
  (void)composite::CurrentRecord<ManagedKind>(store, state_dir, id, backend);  // a driver to finish it
  return OkStatus();
}

namespace {

// Every attempt's lines of one replica, in order, each marked `[attempt N] `; following, the
// current attempt's until it ends, then the next one's, until the run ends.
class AttemptsLog final : public schedulers::LogIterator {
 public:
  AttemptsLog(plugins::PluginRegistry& registry, std::string session, std::string state_dir, std::string id,
              schedulers::LogOptions options)
      : runner_(registry, composite::ChildRunnerOptions(session, nullptr)),
        backend_(MakeRunnerAttemptBackend(runner_)),
        state_dir_(std::move(state_dir)),
        id_(std::move(id)),
        options_(std::move(options)) {}

  Result<std::optional<std::string>> Next() override {
    while (true) {
      if (current_) {
        TORCHX_ASSIGN_OR_RETURN(auto line, current_->Next());
        if (line) return std::optional(fmt::format("[attempt {}] {}", index_, *line));
        current_.reset();
        ++index_;
      }
      ManagedStore store(ManagedDir(state_dir_));
      auto record =
          options_.follow ? composite::CurrentRecord<ManagedKind>(store, state_dir_, id_, *backend_) : store.Get(id_);
      if (!record) return record.error();
      if (!*record) return std::optional<std::string>();
      const ManagedRecord& r = **record;
      while (index_ < static_cast<int>(r.attempts.size()) && r.attempts[index_].handle.empty() &&
             r.attempts[index_].phase != ChildPhase::kSubmitting) {
        ++index_;  // refused: it never ran
      }
      if (index_ < static_cast<int>(r.attempts.size()) && !r.attempts[index_].handle.empty()) {
        const AttemptRecord& a = r.attempts[index_];
        schedulers::LogOptions mine = options_;
        mine.follow = options_.follow && index_ + 1 == static_cast<int>(r.attempts.size()) && !r.final_state;
        auto lines = runner_.LogLines(a.handle, mine);
        if (lines) {
          current_ = std::move(*lines);
          continue;
        }
        if (lines.error().code() != StatusCode::kNotFound) return lines.error();
        ++index_;  // deleted from its scheduler: nothing to read
        continue;
      }
      if (!options_.follow || r.final_state) return std::optional<std::string>();
      std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the next attempt is being made
    }
  }
  bool Ready() override { return current_ && current_->Ready(); }

 private:
  runner::Runner runner_;
  std::unique_ptr<AttemptBackend> backend_;
  std::string state_dir_;
  std::string id_;
  schedulers::LogOptions options_;
  int index_ = 0;
  std::unique_ptr<schedulers::LogIterator> current_;
};

class ManagedScheduler final : public composite::CompositeSchedulerOf<ManagedKind> {
 public:
  using CompositeSchedulerOf::CompositeSchedulerOf;

  // A composite's child run as a managed job (PlanManagedChild): the run its dry run planned,
  // under the id it chose. What a user asks `-s managed` is still refused, at its dry run.
  Result<std::string> Schedule(const schedulers::DryRunInfo& info) override {
    if (info.payload.empty()) return Refusal();
    TORCHX_ASSIGN_OR_RETURN(ManagedRecord r, ManagedCodec::FromJson(info.payload));
    if (r.id != info.app_id) {
      return InvalidArgumentError(
          fmt::format("managed: the dry run's id `{}` is not its record's `{}`", info.app_id, r.id));
    }
    return StartManaged(state_dir_, std::move(r));
  }

  // `torchx describe`: the app and every attempt; on the dashboard, the attempts' timeline (why
  // each was made and how it ended).
  Result<std::optional<std::string>> CompositeDefinition(const std::string& handle, bool json) override {
    TORCHX_ASSIGN_OR_RETURN(std::string def, ManagedDefinition(runner_, handle, json));
    return std::optional(std::move(def));
  }
  Result<std::optional<std::string>> CompositeSection(const std::string& handle) override {
    auto def = ManagedDefinition(runner_, handle, true);
    if (!def) return std::optional<std::string>();
    return std::optional(std::move(*def));
  }

  // The current (latest submitted) attempt's figures, with a note saying which attempt they are.
  Result<std::optional<schedulers::AppUsage>> ResourceUsage(const std::string& app_id,
                                                            const schedulers::UsageOptions& options) override {
    TORCHX_ASSIGN_OR_RETURN(auto record, store_.Get(app_id));
    if (!record) return std::optional<schedulers::AppUsage>();
    for (auto it = record->attempts.rbegin(); it != record->attempts.rend(); ++it) {
      if (it->handle.empty()) continue;
      auto usage = runner_.ResourceUsage(it->handle, options);
      if (!usage) return usage.error().WithContext(fmt::format("attempt {}", it->index));
      if (*usage) {
        std::string which = fmt::format("attempt {} ({})", it->index, it->handle);
        (*usage)->note = (*usage)->note.empty() ? which : which + ": " + (*usage)->note;
      }
      return usage;
    }
    schedulers::AppUsage none;
    none.note = "no attempt has been submitted yet";
    return std::optional(std::move(none));
  }

  Result<std::unique_ptr<schedulers::LogIterator>> MemberLog(const std::string& app_id,
                                                             const schedulers::LogOptions& options) override {
    TORCHX_ASSIGN_OR_RETURN(auto record, store_.Get(app_id));
    if (!record) return NotFoundError(fmt::format("managed job {} does not exist", app_id));
    TORCHX_RETURN_IF_ERROR(CheckRole(*record, options.role));
    return std::unique_ptr<schedulers::LogIterator>(
        std::make_unique<AttemptsLog>(registry_, session_name(), state_dir_, app_id, options));
  }
};

}  // namespace

void RegisterManagedScheduler(plugins::PluginRegistry& registry) {
  composite::RegisterComposite<ManagedScheduler>(registry, kSchedulerName);
}

Result<std::string> ManagedDefinition(runner::Runner& runner, const std::string& handle, bool json) {
  TORCHX_ASSIGN_OR_RETURN(ManagedRecord r, composite::RecordOfHandle<ManagedKind>(runner, handle));
  nlohmann::ordered_json targets = nlohmann::ordered_json::array();
  for (const TargetRecord& t : r.targets)
    targets.push_back({{"scheduler", t.scheduler}, {"cfg", nlohmann::ordered_json::parse(t.cfg_json)}});
  nlohmann::ordered_json attempts = nlohmann::ordered_json::array();
  for (const AttemptRecord& a : r.attempts) {
    nlohmann::ordered_json one = {
        {"attempt", a.index},
        {"handle", a.handle.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(a.handle)},
        {"target", r.targets[a.target].label},
        {"why", a.why},
        {"state", std::string(specs::AppStateName(a.phase == ChildPhase::kRefused ? AppState::kFailed : a.state))}};
    if (!a.cause.empty()) one["cause"] = a.cause;
    if (!a.msg.empty()) one["reason"] = a.msg;
    auto when = [](const std::optional<double>& t) {
      return t ? nlohmann::ordered_json(*t) : nlohmann::ordered_json(nullptr);
    };
    one["submitted"] = when(a.submitted);
    one["started"] = when(a.started);
    one["ended"] = when(a.ended);
    attempts.push_back(std::move(one));
  }
  nlohmann::ordered_json def = {
      {"handle", handle},
      {"state", std::string(specs::AppStateName(LiveState(r)))},
      {"msg", RunMessage(r)},
      {"app", nlohmann::ordered_json::parse(r.app_json)},
      {"targets", std::move(targets)},
      {"max_recoveries", r.max_recoveries},
      {"recover_on", r.recover_on},
      {"start_timeout", r.start_timeout ? nlohmann::ordered_json(*r.start_timeout) : nlohmann::ordered_json(nullptr)},
      {"checkpoint_dir", r.checkpoint_dir},
      {"attempts", std::move(attempts)}};
  if (json) return def.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  return internal::JsonToYaml(def);
}

}  // namespace torchx::managed
