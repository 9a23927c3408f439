// A test-only fourth composite kind, the "ring": links that run one after another, each once the
// one before it succeeded (a failed link ends the ring; the rest do not run). Built over the
// kernel in src/composite/ as any kind is (docs/architecture.md, "Adding a composite kind") and
// loaded as a module ($TORCHX_COMPOSITE_KINDS): the fault suite runs it through the CLI, the
// driver and `status`/`cancel`/`describe` with no line of cli/, src/ui/ or python/ext naming it.
//
// Its file:   name: r
//             scheduler: local_cwd            # optional: the links' scheduler
//             cfg: {...}                      # optional: its options
//             links:
//               - {component: utils.sh, args: [echo, a]}
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "composite/child_ops.h"
#include "composite/children.h"
#include "composite/composite_scheduler.h"
#include "composite/driver_process.h"
#include "composite/record_codec_impl.h"
#include "composite/record_store.h"
#include "core/state_dir.h"
#include "specs/yaml_reader.h"
#include "torchx/composite/kind_module.h"
#include "torchx/config/run_cfg.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/app_id.h"
#include "torchx/specs/serialize.h"

namespace torchx::ring {

using composite::ChildPhase;
using specs::AppState;
using Json = nlohmann::ordered_json;

inline constexpr std::string_view kName = "ring";

// ---- its record: the header, the links' scheduler and options, and each link's app ----

struct LinkRecord : composite::ChildRecord {
  int index = 0;
  std::string app_json;  ///< the AppDef as its dry run built it
  bool operator==(const LinkRecord&) const = default;
};

struct RingRecord : composite::RecordHeader {
  std::string scheduler;
  std::string cfg_json = "{}";
  composite::ChildList<LinkRecord> links;
};

struct RingParts {
  static constexpr std::string_view kNoun = kName;
  static constexpr const char* kChildrenKey = "links";
  static void WriteOwn(const RingRecord& r, composite::RecordJson& j) {
    j["scheduler"] = r.scheduler;
    j["cfg"] = composite::RecordJson::parse(r.cfg_json);
  }
  static Status ReadOwn(const composite::RecordJson& j, RingRecord& r) {
    r.scheduler = j.at("scheduler").get<std::string>();
    r.cfg_json = j.at("cfg").dump();
    return OkStatus();
  }
  static void WriteChildJson(const LinkRecord& l, composite::RecordJson& j) {
    j["index"] = l.index;
    j["app"] = composite::RecordJson::parse(l.app_json);
    composite::WriteChild(l, j);
  }
  static Status ReadChildJson(const composite::RecordJson& j, LinkRecord& l, const RingRecord&) {
    l.index = j.at("index").get<int>();
    l.app_json = j.at("app").dump();
    return composite::ReadChild(j, kName, l);
  }
};

using RingCodec = composite::CodecOf<RingRecord, LinkRecord, &RingRecord::links, RingParts>;

using RingStore = composite::StoreOf<RingCodec, "ring">;

}  // namespace torchx::ring

template struct torchx::composite::CodecOf<torchx::ring::RingRecord, torchx::ring::LinkRecord,
                                           &torchx::ring::RingRecord::links, torchx::ring::RingParts>;

namespace torchx::ring {
namespace {

// ---- its child seam: the shared one, and how a link is dry-run ----

class RingBackend : public composite::ChildBackend {
 public:
  virtual Result<composite::ChildPlan> Plan(const RingRecord& r, const LinkRecord& link) = 0;
};

class RunnerRingBackend final : public composite::OverRunner<RingBackend> {
 public:
  using OverRunner::OverRunner;
  Result<composite::ChildPlan> Plan(const RingRecord& r, const LinkRecord& link) override {
    TORCHX_ASSIGN_OR_RETURN(specs::AppDef app, specs::AppDefFromJson(link.app_json));
    TORCHX_ASSIGN_OR_RETURN(specs::RunOpts opts, runner().SchedulerRunOpts(r.scheduler));
    TORCHX_ASSIGN_OR_RETURN(specs::Cfg cfg, opts.CfgFromJson(r.cfg_json));
    composite::ChildPlan plan;
    TORCHX_ASSIGN_OR_RETURN(plan.info, runner().DryRun(std::move(app), r.scheduler, cfg));
    plan.planned = composite::PlanClaim(plan.info, runner().session_name());
    return plan;
  }
};

// ---- its policy: pure functions over the record ----

// After a change: the links after one that did not succeed will not run; the ring's end once every
// link is final.
void Settle(RingRecord& r) {
  const LinkRecord* failed = nullptr;
  for (size_t i = 0; i < r.links.size(); ++i) {
    const LinkRecord& l = r.links[i];
    if (failed && l.phase == ChildPhase::kWaiting) {
      std::string why = fmt::format("not run: link {} {}", failed->index, specs::AppStateName(failed->state));
      LinkRecord& skipped = r.links.Mut(i);
      skipped.phase = ChildPhase::kSkipped;
      skipped.state = AppState::kCancelled;
      skipped.msg = std::move(why);
      continue;
    }
    if (!failed && composite::IsFinal(l.phase) && l.state != AppState::kSucceeded) failed = &l;
  }
  if (r.final_state) return;
  for (const LinkRecord& l : r.links) {
    if (!composite::IsFinal(l.phase)) return;
  }
  if (r.cancel_requested) {
    r.final_state = AppState::kCancelled;
    r.msg = "cancelled";
  } else if (failed) {
    r.final_state = AppState::kFailed;
    r.msg = fmt::format("link {} did not succeed", failed->index);
  } else {
    r.final_state = AppState::kSucceeded;
  }
}

// The next link to submit: the first one not final, if it waits (the one before it succeeded).
// The position of the link to submit next (links.size() for none).
size_t NextLink(const RingRecord& r) {
  if (r.final_state || r.cancel_requested) return r.links.size();
  for (size_t i = 0; i < r.links.size(); ++i) {
    if (composite::IsFinal(r.links[i].phase)) continue;
    return r.links[i].phase == ChildPhase::kWaiting ? i : r.links.size();
  }
  return r.links.size();
}

// ---- the turns: refresh, decide, submit ----

Result<RingRecord> Refresh(RingStore& store, const std::string& id, RingBackend& backend) {
  TORCHX_ASSIGN_OR_RETURN(auto current, store.Get(id));
  if (!current) return NotFoundError(fmt::format("ring {} does not exist", id));
  if (current->final_state) return std::move(*current);
  std::vector<size_t> at;
  std::vector<std::string> handles;
  for (size_t i = 0; i < current->links.size(); ++i) {
    if (current->links[i].phase != ChildPhase::kSubmitted) continue;
    at.push_back(i);
    handles.push_back(current->links[i].handle);
  }
  std::vector<composite::ChildStatus> seen = backend.Statuses(handles);
  return store.Update(id, [&](RingRecord& r) {
    double now = composite::EpochNow();
    for (size_t k = 0; k < at.size() && k < seen.size(); ++k) {
      if (at[k] < r.links.size()) composite::ApplyChildStatus(r.links.Mut(at[k]), seen[k], now);
    }
    Settle(r);
    return OkStatus();
  });
}

Result<RingRecord> Advance(RingStore& store, const std::string& id, RingBackend& backend) {
  TORCHX_ASSIGN_OR_RETURN(RingRecord r, Refresh(store, id, backend));
  size_t at = NextLink(r);
  if (at == r.links.size()) return r;
  std::map<size_t, Result<composite::ChildPlan>> plans;
  plans.emplace(at, backend.Plan(r, r.links[at]));
  auto waiting = [](const RingRecord&, const LinkRecord& l) { return l.phase == ChildPhase::kWaiting; };
  RingRecord claimed_in;
  TORCHX_ASSIGN_OR_RETURN(auto claimed, composite::ClaimChildren(store, id, &RingRecord::links, std::move(plans),
                                                                 waiting, Settle, claimed_in));
  if (claimed.empty()) return claimed_in;
  return composite::SubmitClaimed(store, id, backend, &RingRecord::links, claimed, Settle);
}

std::string WhyUnknown(const LinkRecord&) {
  return "the ring's driver stopped while submitting this link, and its scheduler cannot tell whether it was";
}

}  // namespace

// ---- the Kind: what the kernel's facade and driver need ----

struct RingKind : composite::KindOf<RingKind, RingRecord, LinkRecord, RingStore, RingBackend> {
  static constexpr composite::KindNames kNames{kName, "ring", "rings", "`torchx composite run ring FILE`"};
  static constexpr auto kChildren = &RingRecord::links;
  static std::unique_ptr<Backend> MakeBackend(runner::Runner& runner) {
    return std::make_unique<RunnerRingBackend>(runner);
  }
  static std::string Label(const LinkRecord& l) { return fmt::format("links[{}]", l.index); }
  static schedulers::MemberApp Member(const RingRecord& r, const LinkRecord& l) {
    schedulers::MemberApp m = composite::MemberOf(l, fmt::format("link{}", l.index), r.scheduler, r.cfg_json);
    if (l.phase != ChildPhase::kSubmitted) m.msg = l.msg;
    return m;
  }
  static Result<std::optional<RingRecord>> WithoutDriver(RingStore& store, const std::string& id, RingBackend& backend,
                                                         const std::string& why) {
    auto abandon = [&why](RingRecord& cur) {
      composite::SkipWaiting(cur.links, why);
      Settle(cur);
    };
    return composite::AbandonThenRefresh(store, id, backend, abandon, Refresh);
  }
  static schedulers::DescribeAppResponse Describe(const RingRecord& r, RingBackend&, runner::Runner&) {
    schedulers::DescribeAppResponse d;
    d.app_id = r.id;
    d.state = LiveState(r);
    d.app = specs::AppDef{};
    d.app->name = r.name;
    std::vector<std::string> lines;
    for (const LinkRecord& l : r.links) {
      lines.push_back(
          fmt::format("link{} {}{}", l.index, specs::AppStateName(l.state), l.handle.empty() ? "" : " " + l.handle));
      d.members.push_back(Member(r, l));
      // Its first role as the ring's role `link<i>` (what `torchx log ring://.../link0` names).
      auto app = specs::AppDefFromJson(l.app_json);
      if (!app || app->roles.empty()) continue;
      specs::Role role = app->roles.front();
      role.name = fmt::format("link{}", l.index);
      specs::RoleStatus rs;
      rs.role = role.name;
      for (int i = 0; i < role.num_replicas; ++i) {
        specs::ReplicaStatus rep;
        rep.id = i;
        rep.role = role.name;
        rep.state = l.state;
        rs.replicas.push_back(std::move(rep));
      }
      d.roles_statuses.push_back(std::move(rs));
      d.app->roles.push_back(std::move(role));
    }
    d.msg = fmt::format("{}", fmt::join(lines, "; "));
    if (r.final_state && !r.msg.empty()) d.msg = r.msg + " (" + d.msg + ")";
    return d;
  }
  static Status Cancel(RingStore& store, const std::string&, const std::string& id, RingBackend& backend) {
    return composite::CancelComposite(store, id, backend, &RingRecord::links, "the ring was cancelled", Settle);
  }
  static Result<std::unique_ptr<composite::DriverTurns>> StartTurns(RingStore& store, const std::string& id,
                                                                    RingBackend& backend, const RingRecord&) {
    auto resolve = [&store, id, &backend] {
      return composite::ResolveClaimsIn(store, id, backend, &RingRecord::links, WhyUnknown, Settle);
    };
    if (Status s = resolve(); !s.ok()) std::fprintf(stderr, "torchx-composite-driver: %s\n", s.message().c_str());
    return std::unique_ptr<composite::DriverTurns>(std::make_unique<composite::AdvancingTurns<RingKind>>(
        store, id, backend, [&store, id, &backend] { return Advance(store, id, backend); }, resolve));
  }
};

namespace {

class RingScheduler final : public composite::CompositeSchedulerOf<RingKind> {
 public:
  using CompositeSchedulerOf::CompositeSchedulerOf;
  // A link's log, by its member name (`link0`); a link not submitted yet has none.
  Result<std::unique_ptr<schedulers::LogIterator>> MemberLog(const std::string& app_id,
                                                             const schedulers::LogOptions& options) override {
    TORCHX_ASSIGN_OR_RETURN(auto record, store_.Get(app_id));
    if (!record) return NotFoundError(fmt::format("ring {} does not exist", app_id));
    for (const LinkRecord& l : record->links) {
      if (fmt::format("link{}", l.index) != options.role) continue;
      if (l.handle.empty()) return schedulers::MakeLinesIterator({});
      TORCHX_ASSIGN_OR_RETURN(specs::AppDef app, specs::AppDefFromJson(l.app_json));
      schedulers::LogOptions link_options = options;
      link_options.role = app.roles.empty() ? options.role : app.roles.front().name;
      return runner_.LogLines(l.handle, link_options);
    }
    return NotFoundError(fmt::format("ring {}: no link `{}`", app_id, options.role));
  }
};

void RegisterRing(plugins::PluginRegistry& registry) { composite::RegisterComposite<RingScheduler>(registry, kName); }

int RunRingDriver(plugins::PluginRegistry& registry, const std::string& state_dir, const std::string& id,
                  int ready_fd) {
  return composite::RunDriverOf<RingKind>(registry, state_dir, id, ready_fd);
}

// ---- its launch: the file read, every link built and dry-run, then the record and the driver ----

Result<composite::PlannedComposite> PlanRing(runner::Runner& runner, const config::TorchxConfig& config,
                                             const composite::LaunchRequest& request) {
  TORCHX_ASSIGN_OR_RETURN(std::string document, composite::DocumentOf(request));
  TORCHX_ASSIGN_OR_RETURN(Json doc, specs::internal::YamlMappingFromText(document, request.origin, "with `links`"));
  auto in = [&request](Status s) { return s.WithContext(request.origin); };
  for (const auto& [key, _] : doc.items()) {
    if (key != "name" && key != "scheduler" && key != "cfg" && key != "links") {
      return in(
          InvalidArgumentError(fmt::format("unknown field `{}`; valid fields: name, scheduler, cfg, links", key)));
    }
  }
  if (!doc.contains("links") || !doc["links"].is_array() || doc["links"].empty()) {
    return in(InvalidArgumentError("links: must be a list of links, each {component, args}"));
  }
  for (const char* key : {"name", "scheduler"}) {
    if (doc.contains(key) && !doc[key].is_string()) {
      return in(InvalidArgumentError(fmt::format("{}: must be a string, got {}", key, doc[key].dump())));
    }
  }
  auto record = std::make_shared<RingRecord>();
  record->name = doc.contains("name") && doc["name"].is_string() ? doc["name"].get<std::string>() : "ring";
  record->id = specs::MakeUnique(specs::NormalizeName(record->name, 40));
  record->session = runner.session_name();
  std::error_code ec;
  record->cwd = std::filesystem::current_path(ec).string();
  record->scheduler = !request.scheduler.empty()                                  ? request.scheduler
                      : doc.contains("scheduler") && doc["scheduler"].is_string() ? doc["scheduler"].get<std::string>()
                                                                                  : runner.DefaultScheduler();
  TORCHX_ASSIGN_OR_RETURN(specs::RunOpts opts, runner.SchedulerRunOpts(record->scheduler));
  using Form = config::CfgSource::Form;
  std::string file_cfg = doc.contains("cfg") ? doc["cfg"].dump() : "{}";
  auto cfg = config::ResolveRunCfg(record->scheduler, opts,
                                   {{Form::kString, request.cfg, "-cfg"}, {Form::kJsonObject, file_cfg, "cfg"}}, config,
                                   config::UnknownOptions::kRefuse);
  if (!cfg) return in(cfg.error());
  record->cfg_json = specs::CfgToJson(*cfg);
  std::string handle = specs::MakeAppHandle(kName, record->session, record->id);
  std::string text = fmt::format("=== RING {} on {}: {} links, one after another ===\n", record->name,
                                 record->scheduler, doc["links"].size());
  for (size_t i = 0; i < doc["links"].size(); ++i) {
    const Json& link = doc["links"][i];
    std::string where = fmt::format("links[{}]", i);
    if (!link.is_object() || !link.contains("component") || !link["component"].is_string()) {
      return in(InvalidArgumentError(where + ": give {component, args}"));
    }
    std::vector<std::string> args;
    const Json& given = link.contains("args") ? link["args"] : Json::array();
    if (!given.is_array()) return in(InvalidArgumentError(where + ".args: must be a list of strings"));
    for (size_t k = 0; k < given.size(); ++k) {
      if (!given[k].is_string()) {
        return in(
            InvalidArgumentError(fmt::format("{}.args[{}]: must be a string, got {}", where, k, given[k].dump())));
      }
      args.push_back(given[k].get<std::string>());
    }
    auto app = runner.ComponentAppDef(link["component"].get<std::string>(), args);
    if (!app) return in(app.error().WithContext(where));
    app->name = fmt::format("link{}", i);
    for (specs::Role& role : app->roles) role.env["TORCHX_RING"] = handle;
    auto info = runner.DryRun(std::move(*app), record->scheduler, *cfg);
    if (!info) return in(info.error().WithContext(where));
    text += fmt::format("\n=== LINK {} ===\n{}\n", i, info->request);
    LinkRecord l;
    l.index = static_cast<int>(i);
    l.app_json = specs::AppDefToJson(info->app, -1);
    record->links.push_back(std::move(l));
  }
  composite::PlannedComposite out;
  out.text = std::move(text);
  out.child_schedulers = {record->scheduler};
  out.launch = [record, handle](runner::Runner&) -> Result<std::string> {
    std::string state_dir = internal::DefaultStateDir();
    RingStore store(RingKind::Dir(state_dir));
    RingRecord r = *record;
    r.created = composite::EpochNow();
    TORCHX_RETURN_IF_ERROR(store.EnsureDir());
    TORCHX_RETURN_IF_ERROR(store.Create(r));
    if (Status s = composite::StartDriver(state_dir, store.dir(), r.id, r.cwd, std::string(kName)); !s.ok()) {
      (void)store.Remove(r.id);
      return s;
    }
    return handle;
  };
  return out;
}

}  // namespace
}  // namespace torchx::ring

extern "C" __attribute__((visibility("default"))) const torchx::composite::KindModule* torchx_composite_kind_v1() {
  static const torchx::composite::KindModule kModule{
      TORCHX_BUILD_ID, {"ring", &torchx::ring::RegisterRing, &torchx::ring::RunRingDriver, &torchx::ring::PlanRing}};
  return &kModule;
}
