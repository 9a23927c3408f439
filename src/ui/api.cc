#include "ui/api.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "core/spelling.h"
#include "schedulers/line_filter.h"
#include "schedulers/merged_lines.h"
#include "specs/error_file.h"
#include "torchx/components/component_json.h"
#include "torchx/config/run_cfg.h"
#include "torchx/runner/app_filter.h"
#include "torchx/schedulers/usage.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/serialize.h"
#include "torchx/ui/server.h"
#include "ui/component_paths.h"

namespace torchx::ui {

using nlohmann::json;

std::string Dump(const json& value) {
  // Text from jobs (error files, names) may not be UTF-8: replaced, never a thrown error.
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

constexpr size_t kDefaultPageSize = 50;
constexpr size_t kMaxPageSize = 500;

std::vector<std::string> Values(const Query& query, const std::string& key) {
  std::vector<std::string> out;
  auto [lo, hi] = query.equal_range(key);
  for (auto it = lo; it != hi; ++it) {
    // `?scheduler=a,b` and `?scheduler=a&scheduler=b` mean the same.
    std::string_view v = it->second;
    while (!v.empty()) {
      size_t comma = v.find(',');
      std::string_view item = v.substr(0, comma);
      if (!item.empty()) out.emplace_back(item);
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 1);
    }
  }
  return out;
}

std::optional<std::string> One(const Query& query, const std::string& key) {
  auto it = query.find(key);
  if (it == query.end()) return std::nullopt;
  return it->second;
}

Result<size_t> Count(const Query& query, const std::string& key, size_t fallback, size_t min, size_t max) {
  std::optional<std::string> v = One(query, key);
  if (!v) return fallback;
  size_t n = 0;
  bool digits =
      !v->empty() && v->size() <= 9 && std::all_of(v->begin(), v->end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) n = std::stoul(*v);
  if (!digits || n < min || n > max) {
    return InvalidArgumentError("query parameter `" + key + "` must be an integer from " + std::to_string(min) +
                                " to " + std::to_string(max) + ", got '" + *v + "'");
  }
  return n;
}

Result<bool> Flag(const Query& query, const std::string& key) {
  std::optional<std::string> v = One(query, key);
  if (!v || *v == "0" || *v == "false") return false;
  if (v->empty() || *v == "1" || *v == "true") return true;
  return InvalidArgumentError("query parameter `" + key + "` must be true or false, got '" + *v + "'");
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

ApiResponse Ok(const json& body, int status = 200) { return ApiResponse{status, Dump(body)}; }

// An error file (written by the job) as {"message", "exit_code", "timestamp"}, read by the one
// reader of its two schemas (specs/error_file.h); anything else is its text as the message. The
// page shows exit codes and messages without parsing strings.
json StructuredError(const std::string& msg) {
  if (msg.empty() || msg == "<NONE>") return nullptr;
  specs::ErrorFile err = specs::ReadErrorFile(msg);
  return {{"message", err.message}, {"exit_code", err.error_code}, {"timestamp", err.timestamp}};
}

json StatusJson(const specs::AppStatus& s) {
  json roles = json::array();
  for (const specs::RoleStatus& r : s.roles) {
    json replicas = json::array();
    for (const specs::ReplicaStatus& rep : r.replicas) {
      replicas.push_back({{"id", rep.id},
                          {"state", std::string(specs::AppStateName(rep.state))},
                          {"hostname", rep.hostname},
                          {"structured_error", StructuredError(rep.structured_error_msg)}});
    }
    roles.push_back({{"role", r.role}, {"replicas", std::move(replicas)}});
  }
  return {{"state", std::string(specs::AppStateName(s.state))},
          {"num_restarts", s.num_restarts},
          {"msg", s.msg},
          {"structured_error", StructuredError(s.structured_error_msg)},
          {"ui_url", s.ui_url ? json(*s.ui_url) : json(nullptr)},
          {"roles", std::move(roles)}};
}

// What the apps page shows of an app's roles: name, replica count and how many are in each state.
json RoleSummary(const specs::AppStatus& s) {
  json roles = json::array();
  for (const specs::RoleStatus& r : s.roles) {
    json states = json::object();
    for (const specs::ReplicaStatus& rep : r.replicas) {
      std::string name(specs::AppStateName(rep.state));
      states[name] = states.value(name, 0) + 1;
    }
    roles.push_back({{"role", r.role}, {"replicas", r.replicas.size()}, {"states", std::move(states)}});
  }
  return roles;
}

std::string SchedulerOf(const std::string& handle) {
  auto parsed = specs::ParseAppHandle(handle);
  return parsed ? parsed->scheduler_backend : std::string();
}

}  // namespace

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

ApiResponse ErrorResponse(const ::torchx::Status& status) {
  json body = {{"error", {{"code", std::string(StatusCodeName(status.code()))}, {"message", status.message()}}}};
  return ApiResponse{HttpStatusFor(status.code()), Dump(body)};
}

Api::Api(plugins::PluginRegistry& registry, ApiOptions options) : registry_(registry), options_(std::move(options)) {}

runner::Runner& Api::Shared() const {
  std::lock_guard lock(runners_mu_);
  std::unique_ptr<runner::Runner>& mine = runners_[std::this_thread::get_id()];
  if (!mine) mine = MakeRunner();
  return *mine;
}

std::unique_ptr<runner::Runner> Api::MakeRunner() const {
  return std::make_unique<runner::Runner>(registry_, options_.runner_options);
}

namespace {

struct ListFilter {
  std::vector<std::string> schedulers;
  runner::AppFilter apps;  // the rule `torchx list` keeps apps by
};

Result<ListFilter> ReadFilter(const Query& query, const std::vector<std::string>& configured) {
  ListFilter f;
  f.schedulers = Values(query, "scheduler");
  for (const std::string& s : f.schedulers) {
    if (std::find(configured.begin(), configured.end(), s) == configured.end()) {
      return InvalidArgumentError("query parameter `scheduler`: '" + s + "' is not one of the listed schedulers (" +
                                  Join(configured) + "); start `torchx ui -s " + s + "` to list it");
    }
  }
  if (f.schedulers.empty()) f.schedulers = configured;
  for (const std::string& s : Values(query, "state")) {
    auto state = specs::ParseAppState(s);
    if (!state) return InvalidArgumentError("query parameter `state`: " + state.error().message());
    f.apps.states.insert(*state);
  }
  f.apps.name = One(query, "name").value_or("");
  if (auto since = One(query, "since"); since && !since->empty()) {
    char* end = nullptr;
    double t = std::strtod(since->c_str(), &end);
    if (*end != '\0' || !std::isfinite(t))
      return InvalidArgumentError("query parameter `since`: must be epoch seconds, got '" + *since + "'");
    f.apps.since = t;
  }
  return f;
}

// A composite app's member as the apps page and the app page's graph show it.
json MemberJson(const schedulers::MemberApp& m) { return json::parse(schedulers::MemberAppToJson(m)); }

// The apps a filter keeps, newest first across schedulers where the back-end says when (each
// listing is already newest first, and a stable sort keeps that order for the apps without a
// time), pointing into the shared snapshot they were taken from.
struct Listed {
  const std::string* scheduler;
  const schedulers::ListAppResponse* app;
};
struct Listing {
  std::shared_ptr<const Api::ListingSnapshot> snapshot;  // what `apps` points into
  std::vector<Listed> apps;
  json errors = json::array();
};

}  // namespace

struct Api::ListingSnapshot {
  struct Of {
    std::string scheduler;
    std::optional<std::string> error;  // the scheduler could not list
    std::vector<schedulers::ListAppResponse> apps;
    std::set<std::string> nested;  // a pipeline's steps are shown under it, not again on their own
  };
  std::chrono::steady_clock::time_point taken;
  std::vector<Of> schedulers;
};

namespace {

// How a shared answer taken at `taken` may serve now: fresh within kListingMaxAge; stale within
// kStaleServes of it while one caller takes it anew (the others are answered at once instead of
// waiting for that caller, so a busy dashboard's users never queue behind a rebuild); past that,
// everyone waits for a new one.
enum class Age { kFresh, kStale, kOld };
constexpr std::chrono::milliseconds kStaleServes{5000};
Age AgeOf(std::chrono::steady_clock::time_point taken, std::chrono::milliseconds max_age) {
  auto age = std::chrono::steady_clock::now() - taken;
  return age < max_age ? Age::kFresh : age < max_age + kStaleServes ? Age::kStale : Age::kOld;
}

}  // namespace

std::shared_ptr<const Api::ListingSnapshot> Api::Listings() const {
  auto called = std::chrono::steady_clock::now();
  // A cancel marks its app settling before it moves the generation on (and forgets the shared
  // listing): a call that finds nothing settling either read the generation before that move
  // (and keeps nothing it takes) or finds no listing from before the cancel.
  std::uint64_t generation = generation_.load();
  bool settling = Settling(nullptr);
  // Settling, only a listing taken after this call began will do.
  auto usable = [&](const ListingSnapshot& s) {
    return settling ? s.taken >= called : AgeOf(s.taken, kListingMaxAge) == Age::kFresh;
  };
  std::shared_ptr<const ListingSnapshot> now;
  {
    std::lock_guard lock(listings_mu_);
    now = listings_;
  }
  Age age = !now || settling ? Age::kOld : AgeOf(now->taken, kListingMaxAge);
  if (age == Age::kFresh) return now;
  std::unique_lock refreshing(refresh_mu_, std::defer_lock);
  if (age == Age::kStale) {
    if (!refreshing.try_lock()) return now;  // another caller is taking it anew
  } else {
    refreshing.lock();  // concurrent callers wait for one listing
  }
  {
    std::lock_guard lock(listings_mu_);
    if (listings_ && listings_ != now && usable(*listings_)) return listings_;
  }
  // Kept below only if nothing changed through the API while it was taken.
  generation = std::max(generation, generation_.load());
  auto snapshot = std::make_shared<ListingSnapshot>();
  snapshot->taken = std::chrono::steady_clock::now();  // its age counts from before it was read
  for (const std::string& scheduler : options_.schedulers) {
    ListingSnapshot::Of& of = snapshot->schedulers.emplace_back();
    of.scheduler = scheduler;
    auto listed = Shared().List(scheduler);
    if (!listed) {
      of.error = listed.error().message();
      continue;
    }
    of.nested = runner::MemberHandles(*listed);
    of.apps = std::move(*listed);
  }
  if (settling) {
    // Ended, or gone from its own scheduler's listing (deleted elsewhere).
    SeenEnded([&](const std::string& handle) {
      for (const ListingSnapshot::Of& of : snapshot->schedulers) {
        if (of.scheduler != SchedulerOf(handle) || of.error) continue;
        for (const schedulers::ListAppResponse& app : of.apps) {
          if (app.app_handle == handle) return specs::IsTerminal(app.state);
        }
        return true;
      }
      return false;
    });
  }
  std::lock_guard lock(listings_mu_);
  if (generation_.load() == generation) listings_ = snapshot;  // else it may predate a change
  return snapshot;
}

bool Api::Settling(const std::string* handle) const {
  std::lock_guard lock(settling_mu_);
  auto now = std::chrono::steady_clock::now();
  std::erase_if(settling_, [&](const auto& entry) { return entry.second < now; });
  return handle ? settling_.contains(*handle) : !settling_.empty();
}

void Api::SeenEnded(const std::function<bool(const std::string& handle)>& ended) const {
  // What was kept while it settled may show it running: forgotten before the app stops settling
  // (under the same lock), so no caller finds it settled and is answered what was kept.
  // (settling_mu_ is never taken inside listings_mu_ or apps_mu_.)
  std::lock_guard lock(settling_mu_);
  bool any = std::any_of(settling_.begin(), settling_.end(), [&](const auto& entry) { return ended(entry.first); });
  if (!any) return;
  ForgetListings();
  std::erase_if(settling_, [&](const auto& entry) { return ended(entry.first); });
}

void Api::ForgetListings() const {
  generation_.fetch_add(1);
  {
    std::lock_guard lock(listings_mu_);
    listings_.reset();
  }
  std::lock_guard lock(apps_mu_);
  apps_.clear();
}

ApiResponse Api::GetAppShared(const std::string& handle) const {
  // As in Listings: the generation is read before Settling.
  std::uint64_t generation = generation_.load();
  if (Settling(&handle)) {
    bool ended = false;
    ApiResponse answer = Document(handle, &ended);
    if (ended) SeenEnded([&](const std::string& h) { return h == handle; });
    return answer;  // not kept: the next caller may see it end
  }
  {
    std::lock_guard lock(apps_mu_);
    if (auto it = apps_.find(handle); it != apps_.end()) {
      Age age = AgeOf(it->second.taken, kListingMaxAge);
      // Stale: this caller takes it anew unless another already is (then the stale one serves).
      if (age == Age::kFresh || (age == Age::kStale && it->second.refreshing)) return it->second.answer;
      if (age == Age::kStale) it->second.refreshing = true;
    }
  }
  auto taken = std::chrono::steady_clock::now();
  ApiResponse answer = GetApp(handle);
  std::lock_guard lock(apps_mu_);
  if (apps_.size() >= 256) apps_.clear();  // handles come from clients: keep the map small
  if (generation_.load() == generation) {
    apps_[handle] = SharedApp{taken, answer, false};
  } else if (auto it = apps_.find(handle); it != apps_.end()) {
    it->second.refreshing = false;  // taken before a change: not kept
  }
  return answer;
}

namespace {

Listing ListAll(std::shared_ptr<const Api::ListingSnapshot> snapshot, const ListFilter& f) {
  Listing out;
  std::set<std::string> nested;
  std::vector<const Api::ListingSnapshot::Of*> chosen;
  for (const std::string& scheduler : f.schedulers) {
    for (const Api::ListingSnapshot::Of& of : snapshot->schedulers) {
      if (of.scheduler != scheduler) continue;
      if (of.error) {
        out.errors.push_back({{"scheduler", scheduler}, {"message", *of.error}});
      } else {
        nested.insert(of.nested.begin(), of.nested.end());
        chosen.push_back(&of);
      }
    }
  }
  for (const Api::ListingSnapshot::Of* of : chosen) {
    for (const schedulers::ListAppResponse& a : of->apps) {
      if (nested.contains(a.app_handle) || !runner::Matches(f.apps, a)) continue;
      out.apps.push_back(Listed{&of->scheduler, &a});
    }
  }
  std::stable_sort(out.apps.begin(), out.apps.end(), [](const Listed& a, const Listed& b) {
    return a.app->created.value_or(0) > b.app->created.value_or(0);
  });
  out.snapshot = std::move(snapshot);
  return out;
}

}  // namespace

ApiResponse Api::ListApps(const Query& query) const {
  auto filter = ReadFilter(query, options_.schedulers);
  if (!filter) return ErrorResponse(filter.error());
  auto offset = Count(query, "offset", 0, 0, 1'000'000'000);
  if (!offset) return ErrorResponse(offset.error());
  auto limit = Count(query, "limit", kDefaultPageSize, 1, kMaxPageSize);
  if (!limit) return ErrorResponse(limit.error());

  runner::Runner* runner = &Shared();
  Listing listing = ListAll(Listings(), *filter);
  std::map<std::string, bool> composite;  // by scheduler: a capability, not a kind
  auto IsComposite = [&](const std::string& scheduler) {
    auto [it, added] = composite.try_emplace(scheduler, false);
    if (added) {
      auto caps = runner->SchedulerCapabilities(scheduler);
      it->second = caps && caps->Has(schedulers::Capability::kComposite);
    }
    return it->second;
  };
  json page = json::array();
  for (size_t i = *offset; i < listing.apps.size() && i < *offset + *limit; ++i) {
    const schedulers::ListAppResponse& app = *listing.apps[i].app;
    const std::string& scheduler = *listing.apps[i].scheduler;
    json item = {{"app_handle", app.app_handle},
                 {"app_id", app.app_id},
                 {"name", app.name},
                 {"scheduler", scheduler},
                 {"state", std::string(specs::AppStateName(app.state))},
                 {"created", app.created ? json(*app.created) : json(nullptr)},
                 {"num_restarts", app.num_restarts ? json(*app.num_restarts) : json(nullptr)},
                 {"ended", app.ended ? json(*app.ended) : json(nullptr)},
                 {"user", app.user},
                 {"reason", app.reason},
                 {"roles", json::array()},
                 {"composite", IsComposite(scheduler)},
                 {"member_counts", json::object()}};
    // A composite is one row: its children counted by state, as Ray groups tasks (the children
    // themselves are paged by GET /api/v1/apps/{handle}/members when the row is expanded).
    for (const schedulers::MemberApp& m : app.members) {
      json& n = item["member_counts"][std::string(specs::AppStateName(m.state))];
      n = n.is_null() ? 1 : n.get<int>() + 1;
    }
    // Only the page's apps are described: a listing of 10,000 apps costs one List per scheduler.
    // A composite's roles are its children, already counted.
    if (auto status =
            item["composite"] ? Result<std::optional<specs::AppStatus>>(std::nullopt) : runner->Status(app.app_handle);
        status && *status) {
      item["roles"] = RoleSummary(**status);
      item["num_restarts"] = (*status)->num_restarts;
    }
    page.push_back(std::move(item));
  }
  return Ok({{"apps", std::move(page)},
             {"total", listing.apps.size()},
             {"offset", *offset},
             {"limit", *limit},
             {"schedulers", filter->schedulers},
             {"errors", std::move(listing.errors)}});
}

Result<std::string> Api::AppsDigest(const Query& query) const {
  TORCHX_ASSIGN_OR_RETURN(ListFilter filter, ReadFilter(query, options_.schedulers));
  Listing listing = ListAll(Listings(), filter);
  std::string digest = Dump(listing.errors);
  for (const Listed& listed : listing.apps) {
    const schedulers::ListAppResponse& app = *listed.app;
    digest += app.app_handle;
    digest += ' ';
    digest += specs::AppStateName(app.state);
    digest += ' ';
    digest += std::to_string(app.num_restarts.value_or(0));
    for (const schedulers::MemberApp& m : app.members) {  // a step moving changes the page too
      digest += ' ';
      digest += specs::AppStateName(m.state);
    }
    digest += '\n';
  }
  return digest;
}

namespace {

// The app's status, or the error to answer: a malformed handle, an unreachable scheduler, or 404
// (cancel and delete of an unknown app do nothing in TorchX; a dashboard says it is gone).
Result<specs::AppStatus> ExistingApp(runner::Runner& runner, const std::string& handle) {
  TORCHX_ASSIGN_OR_RETURN(std::optional<specs::AppStatus> status, runner.Status(handle));
  if (!status) return NotFoundError("app not found: " + handle);
  return *status;
}

}  // namespace

ApiResponse Api::GetApp(const std::string& handle) const { return Document(handle, nullptr); }

ApiResponse Api::Document(const std::string& handle, bool* ended) const {
  runner::Runner* runner = &Shared();
  auto status = ExistingApp(*runner, handle);
  if (ended) *ended = status ? status->is_terminal() : status.error().code() == StatusCode::kNotFound;
  if (!status) return ErrorResponse(status.error());
  json body = {{"app_handle", handle}, {"scheduler", SchedulerOf(handle)}, {"status", StatusJson(*status)}};
  // A composite (capability, not kind): the page offers its driver's log.
  auto caps = runner->SchedulerCapabilities(SchedulerOf(handle));
  body["composite"] = caps && caps->Has(schedulers::Capability::kComposite);
  auto parsed = specs::ParseAppHandle(handle);
  body["app_id"] = parsed ? parsed->app_id : "";
  json attempts = json::array();
  if (auto history = runner->Attempts(handle)) {
    for (const schedulers::ReplicaAttempt& a : *history) {
      attempts.push_back({{"role", a.role},
                          {"replica", a.replica_id},
                          {"attempt", a.attempt},
                          {"state", std::string(specs::AppStateName(a.state))},
                          {"exit_code", a.exit_code ? json(*a.exit_code) : json(nullptr)},
                          {"started", a.started},
                          {"ended", a.ended ? json(*a.ended) : json(nullptr)}});
    }
  }
  // When it started and ended: its replicas' first start and last end, where the scheduler keeps
  // a history.
  json started = nullptr;
  json last_end = nullptr;
  bool all_ended = !attempts.empty();
  for (const json& a : attempts) {
    if (started.is_null() || a["started"].get<double>() < started.get<double>()) started = a["started"];
    if (a["ended"].is_null()) all_ended = false;
    if (!a["ended"].is_null() && (last_end.is_null() || a["ended"].get<double>() > last_end.get<double>())) {
      last_end = a["ended"];
    }
  }
  body["started"] = std::move(started);
  body["attempts"] = std::move(attempts);
  // When it was submitted and who submitted it, as the apps list says (the last shared listing,
  // of any age: a document never waits for a listing); null where no listed scheduler lists it.
  // An app that ended after that listing was taken has its end from its history.
  body["created"] = nullptr;
  body["ended"] = nullptr;
  body["user"] = nullptr;
  std::shared_ptr<const ListingSnapshot> listing;  // held: the loop reads into it
  {
    std::lock_guard lock(listings_mu_);
    listing = listings_;
  }
  auto take = [&](const schedulers::ListAppResponse& listed) {
    if (listed.app_handle != handle) return;
    if (listed.created) body["created"] = *listed.created;
    if (listed.ended) body["ended"] = *listed.ended;
    if (!listed.user.empty()) body["user"] = listed.user;
  };
  if (listing) {
    for (const ListingSnapshot::Of& of : listing->schedulers) std::for_each(of.apps.begin(), of.apps.end(), take);
  } else if (auto own = runner->List(SchedulerOf(handle)); own) {
    // None shared yet: its own scheduler's, not kept (a document must not seed the apps page's
    // listing with a state it read before a change made elsewhere).
    std::for_each(own->begin(), own->end(), take);
  }
  if (status->is_terminal() && body["ended"].is_null() && all_ended) body["ended"] = last_end;
  json failure_logs = json::array();
  if (status->state == specs::AppState::kFailed) {
    if (auto tails = runner->FailureTails(handle); tails && *tails) {
      for (const runner::ReplicaLogTail& t : **tails) {
        failure_logs.push_back({{"role", t.role}, {"replica", t.replica_id}, {"stream", t.stream}, {"lines", t.lines}});
      }
    }
  }
  body["failure_logs"] = std::move(failure_logs);
  // The large parts (a 1,000-trial sweep's AppDef, members and section) are JSON text already,
  // each written with invalid UTF-8 replaced: spliced into the answer as they are. Parsing them
  // only to dump them again was most of such a sweep's page.
  std::vector<std::pair<std::string, std::string>> spliced;
  auto app = runner->Describe(handle);
  spliced.emplace_back("appdef", app && *app ? specs::AppDefToJson(**app, -1) : "null");
  std::string members = "[";  // a pipeline's steps: the app page draws their graph
  if (auto listed = runner->Members(handle); listed && *listed) {
    for (const schedulers::MemberApp& m : **listed) {
      if (members.size() > 1) members += ',';
      members += schedulers::MemberAppToJson(m);
    }
  }
  spliced.emplace_back("members", members + "]");
  // A composite kind's own section, under its scheduler's name (a sweep's trials with their values
  // and metrics: the page's table and plots; a managed job's attempts: its timeline).
  if (auto section = runner->CompositeSection(handle); parsed && section && *section && !(*section)->empty()) {
    spliced.emplace_back(parsed->scheduler_backend, std::move(**section));
  }
  std::string text = Dump(body);  // an object: "{...}"
  text.pop_back();
  for (const auto& [key, value] : spliced) {
    text += ',';
    ::torchx::internal::AppendJsonString(text, key);
    text += ':';
    text += value;
  }
  text += '}';
  return ApiResponse{200, std::move(text)};
}

namespace {

// ?role=&replica=: which replicas a stack dump or a profile is of (a replica id needs its role).
Result<schedulers::StackOptions> ReplicasOf(const Query& query) {
  schedulers::StackOptions options;
  if (auto it = query.find("role"); it != query.end()) options.role = it->second;
  if (query.contains("replica")) {
    TORCHX_ASSIGN_OR_RETURN(size_t replica, Count(query, "replica", 0, 0, 1'000'000));
    if (options.role.empty()) return InvalidArgumentError("`replica` needs `role` (ids are per role)");
    options.replica_id = static_cast<int>(replica);
  }
  return options;
}

}  // namespace

ApiResponse Api::DumpStacks(const std::string& handle, const Query& query) const {
  auto replicas = ReplicasOf(query);
  if (!replicas) return ErrorResponse(replicas.error());
  const schedulers::StackOptions& options = *replicas;
  auto stacks = Shared().DumpStacks(handle, options);
  if (!stacks) return ErrorResponse(stacks.error());
  if (!*stacks) return ErrorResponse(NotFoundError("app not found: " + handle));
  return ApiResponse{200, schedulers::StacksToJson(**stacks)};
}

ApiResponse Api::ProfileApp(const std::string& handle, const Query& query) const {
  auto replicas = ReplicasOf(query);
  if (!replicas) return ErrorResponse(replicas.error());
  schedulers::ProfileOptions options;
  options.role = replicas->role;
  options.replica_id = replicas->replica_id;
  auto seconds = Count(query, "duration", 5, 1, 60);
  if (!seconds) return ErrorResponse(seconds.error());
  options.seconds = static_cast<double>(*seconds);
  // py-spy writes a file: a private temporary one, read back and removed.
  char path[] = "/tmp/torchx-ui-profile-XXXXXX";
  int fd = ::mkstemp(path);
  if (fd < 0)
    return ErrorResponse(InternalError(fmt::format("profile: cannot make a temporary file: {}", strerror(errno))));
  ::close(fd);
  options.output = path;
  ::torchx::Status done = Shared().Profile(handle, options);
  std::string body;
  if (done.ok()) {
    std::ifstream in(path, std::ios::binary);
    body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ::unlink(path);
  if (!done.ok()) return ErrorResponse(done);
  if (body.empty()) return ErrorResponse(InternalError("profile: py-spy wrote nothing"));
  return ApiResponse{200, std::move(body)};
}

ApiResponse Api::ListHosts(const Query& query) const {
  std::vector<std::string> names = Values(query, "scheduler");
  runner::Runner* runner = &Shared();
  bool chosen = !names.empty();
  if (!chosen) names = options_.schedulers;
  json out = json::array();
  for (const std::string& name : names) {
    auto caps = runner->SchedulerCapabilities(name);
    if (!caps && chosen && caps.error().code() == StatusCode::kNotFound) return ErrorResponse(caps.error());
    if (!caps) {  // one that cannot be built (its module, its engine's client) hides no other
      out.push_back({{"scheduler", name}, {"error", caps.error().message()}});
      continue;
    }
    if (!chosen && !caps->Has(schedulers::Capability::kHosts)) continue;
    auto hosts = runner->Hosts(name);
    if (!hosts) {
      if (chosen && hosts.error().code() == StatusCode::kUnimplemented) return ErrorResponse(hosts.error());
      out.push_back({{"scheduler", name}, {"error", hosts.error().message()}});
      continue;
    }
    out.push_back(json::parse(schedulers::HostsToJson(name, *hosts)));
  }
  return Ok({{"schedulers", std::move(out)}});
}

ApiResponse Api::ListMembers(const std::string& handle, const Query& query) const {
  auto offset = Count(query, "offset", 0, 0, 1'000'000'000);
  if (!offset) return ErrorResponse(offset.error());
  auto limit = Count(query, "limit", kDefaultPageSize, 1, kMaxPageSize);
  if (!limit) return ErrorResponse(limit.error());
  // From the shared listing where its scheduler is listed (a 1,000-trial sweep's page of 50 is
  // then no read at all); else from the composite itself.
  std::shared_ptr<const ListingSnapshot> listing = Listings();
  const std::vector<schedulers::MemberApp>* members = nullptr;
  for (const ListingSnapshot::Of& of : listing->schedulers) {
    for (const schedulers::ListAppResponse& app : of.apps) {
      if (app.app_handle == handle) members = &app.members;
    }
  }
  std::optional<std::vector<schedulers::MemberApp>> described;
  if (!members) {
    auto found = Shared().Members(handle);
    if (!found) return ErrorResponse(found.error());
    if (!*found) return ErrorResponse(NotFoundError("app not found: " + handle));
    described = std::move(**found);
    members = &*described;
  }
  json page = json::array();
  for (size_t i = *offset; i < members->size() && i < *offset + *limit; ++i) page.push_back(MemberJson((*members)[i]));
  return Ok({{"app_handle", handle},
             {"members", std::move(page)},
             {"total", members->size()},
             {"offset", *offset},
             {"limit", *limit}});
}

ApiResponse Api::GetResources(const std::string& handle, const Query& query) const {
  schedulers::UsageOptions opts;
  if (auto it = query.find("since"); it != query.end()) {
    const std::string& v = it->second;
    char* end = nullptr;
    double since = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(since)) {
      return ErrorResponse(InvalidArgumentError("since: must be epoch seconds, got '" + v + "'"));
    }
    opts.since = since;
  }
  if (auto it = query.find("max_samples"); it != query.end()) {
    const std::string& v = it->second;
    char* end = nullptr;
    long n = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n < 0) {
      return ErrorResponse(InvalidArgumentError("max_samples: must be a whole number >= 0, got '" + v + "'"));
    }
    opts.max_samples = static_cast<size_t>(n);
  }
  runner::Runner* runner = &Shared();
  auto usage = runner->ResourceUsage(handle, opts);
  if (!usage) return ErrorResponse(usage.error());
  if (!*usage) return ErrorResponse(NotFoundError("app not found: " + handle));
  return Ok(json::parse(schedulers::UsageToJson(**usage)));
}

ApiResponse Api::CancelApp(const std::string& handle) const {
  runner::Runner* runner = &Shared();
  auto outcome = runner->RequestCancel(handle);
  if (!outcome) return ErrorResponse(outcome.error());
  if (outcome->kind == runner::Runner::CancelOutcome::Kind::kNotFound) {
    return ErrorResponse(NotFoundError("app not found: " + handle));
  }
  if (!specs::IsTerminal(outcome->state)) {  // it ends after this answer: its reads are fresh till then
    std::lock_guard lock(settling_mu_);
    settling_[handle] = std::chrono::steady_clock::now() + kSettleWithin;
  }
  ForgetListings();
  return Ok({{"app_handle", handle}, {"state", std::string(specs::AppStateName(outcome->state))}}, 202);
}

ApiResponse Api::DeleteApp(const std::string& handle) const {
  runner::Runner* runner = &Shared();
  if (auto app = ExistingApp(*runner, handle); !app) return ErrorResponse(app.error());
  if (::torchx::Status s = runner->Delete(handle); !s.ok()) return ErrorResponse(s);
  ForgetListings();
  return Ok({{"app_handle", handle}, {"deleted", true}});
}

namespace {

// The request's scheduler options: a JSON object of typed values or TorchX's `k=v,k2=v2` string,
// then `[<scheduler>]` from .torchxconfig for keys not given. Unknown keys are an error here
// (the CLI warns): a form sends only what `GET /api/v1/schedulers` listed.
Result<specs::Cfg> RequestCfg(runner::Runner& runner, const std::string& scheduler, const json& cfg_json,
                              const config::TorchxConfig& config) {
  TORCHX_ASSIGN_OR_RETURN(specs::RunOpts opts, runner.SchedulerRunOpts(scheduler));
  std::vector<config::CfgSource> sources;
  if (cfg_json.is_string()) {
    sources.push_back({config::CfgSource::Form::kString, cfg_json.get<std::string>(), "field `cfg`"});
  } else if (cfg_json.is_object()) {
    sources.push_back({config::CfgSource::Form::kJsonObject, cfg_json.dump(), "field `cfg`"});
  } else if (!cfg_json.is_null()) {
    return InvalidArgumentError("field `cfg` must be an object of scheduler options or a `k=v,...` string");
  }
  return config::ResolveRunCfg(scheduler, opts, sources, config, config::UnknownOptions::kRefuse);
}

Result<specs::AppDef> RequestApp(runner::Runner& runner, const json& req) {
  bool has_component = req.contains("component");
  bool has_appdef = req.contains("appdef");
  if (has_component == has_appdef) {
    return InvalidArgumentError("give exactly one of the fields `component` (with `args`) and `appdef`");
  }
  if (has_appdef) {
    if (!req["appdef"].is_object()) return InvalidArgumentError("field `appdef` must be an AppDef object");
    auto app = specs::AppDefFromJson(req["appdef"].dump());
    if (!app) return InvalidArgumentError("field `appdef`: " + app.error().message());
    return app;
  }
  if (!req["component"].is_string() || req["component"].get<std::string>().empty()) {
    return InvalidArgumentError("field `component` must be a component name such as utils.echo");
  }
  std::string component = req["component"].get<std::string>();
  json args = req.value("args", json::array());
  if (args.is_object()) return runner.ComponentAppDefFromJson(component, args.dump());
  if (!args.is_array()) {
    return InvalidArgumentError("field `args` must be a list of CLI arguments or an object of typed arguments");
  }
  std::vector<std::string> argv;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_string()) return InvalidArgumentError("field `args[" + std::to_string(i) + "]` must be a string");
    argv.push_back(args[i].get<std::string>());
  }
  return runner.ComponentAppDef(component, argv);
}

}  // namespace

ApiResponse Api::SubmitApp(const std::string& body) const {
  json req = json::parse(body, nullptr, false);
  if (req.is_discarded() || !req.is_object()) {
    return ErrorResponse(InvalidArgumentError("the request body must be a JSON object"));
  }
  for (const auto& [key, value] : req.items()) {
    static const std::set<std::string> kFields = {"component", "args", "appdef", "scheduler", "cfg", "dryrun"};
    if (!kFields.contains(key)) {
      return ErrorResponse(
          InvalidArgumentError("unknown field `" + key + "`; valid fields: " + Join({kFields.begin(), kFields.end()})));
    }
  }
  std::string scheduler = options_.schedulers.empty() ? plugins::DefaultSchedulerName() : options_.schedulers.front();
  if (req.contains("scheduler")) {
    if (!req["scheduler"].is_string()) return ErrorResponse(InvalidArgumentError("field `scheduler` must be a string"));
    scheduler = req["scheduler"].get<std::string>();
  }
  bool dryrun = false;
  if (req.contains("dryrun")) {
    if (!req["dryrun"].is_boolean()) return ErrorResponse(InvalidArgumentError("field `dryrun` must be true or false"));
    dryrun = req["dryrun"].get<bool>();
  }
  if (req.contains("component") && req["component"].is_string()) {
    Status allowed = CheckComponentPath(req["component"].get<std::string>(), options_.component_roots);
    if (!allowed.ok()) return ErrorResponse(allowed);
  }
  runner::Runner* runner = &Shared();
  auto cfg = RequestCfg(*runner, scheduler, req.value("cfg", json(nullptr)), options_.config);
  if (!cfg) return ErrorResponse(cfg.error());
  auto app = RequestApp(*runner, req);
  if (!app) return ErrorResponse(app.error());
  auto info = runner->DryRun(std::move(*app), scheduler, *cfg);
  if (!info) return ErrorResponse(info.error());
  if (dryrun) {
    return Ok({{"dryrun",
                {{"scheduler", info->scheduler},
                 {"request", info->request},
                 {"cfg", json::parse(specs::CfgToJson(info->cfg))},
                 {"appdef", json::parse(specs::AppDefToJson(info->app, -1))}}}});
  }
  auto handle = runner->Schedule(*info);
  if (!handle) return ErrorResponse(handle.error());
  ForgetListings();  // the next page lists the new app
  return Ok({{"app_handle", *handle}, {"scheduler", scheduler}}, 201);
}

ApiResponse Api::ListComponents() const {
  runner::Runner* runner = &Shared();
  json out = json::array();
  for (const std::string& name : runner->ComponentNames()) {
    auto component = runner->Component(name);
    if (!component) continue;
    const components::ComponentSpec& spec = (*component)->spec();
    out.push_back({{"name", name}, {"summary", spec.summary}, {"deprecation", spec.deprecation}});
  }
  return Ok({{"components", std::move(out)}});
}

ApiResponse Api::GetComponent(const std::string& name) const {
  if (Status allowed = CheckComponentPath(name, options_.component_roots); !allowed.ok()) {
    return ErrorResponse(allowed);
  }
  runner::Runner* runner = &Shared();
  auto component = runner->Component(name);
  if (!component) return ErrorResponse(component.error());
  json spec = json::parse(components::ComponentSpecToJson((*component)->spec()));
  spec["name"] = name;
  spec["origin"] = (*component)->origin();
  return Ok(spec);
}

ApiResponse Api::ListSchedulers() const {
  runner::Runner* runner = &Shared();
  json out = json::array();
  for (const std::string& name : runner->SchedulerBackends()) {
    bool listed = std::find(options_.schedulers.begin(), options_.schedulers.end(), name) != options_.schedulers.end();
    json entry = {{"name", name}, {"listed", listed}};
    // A back-end whose module or engine is missing still appears, with the reason.
    if (auto opts = runner->SchedulerRunOpts(name)) {
      entry["runopts"] = json::parse(specs::RunOptsToJson(*opts));
    } else {
      entry["runopts"] = json::array();
      entry["error"] = opts.error().message();
    }
    // What the pages offer for its apps (delete, follow) and whether it takes a run at all.
    json caps = json::array();
    if (auto have = runner->SchedulerCapabilities(name)) {
      for (schedulers::Capability c : have->List()) caps.push_back(std::string(schedulers::CapabilityName(c)));
    }
    entry["capabilities"] = std::move(caps);
    out.push_back(std::move(entry));
  }
  return Ok({{"schedulers", std::move(out)}});
}

Result<Api::OpenedLog> Api::OpenLog(const std::string& handle, const Query& query) const {
  schedulers::LogOptions opts;
  // replica=all: every replica (of `role`, or of every role) interleaved, each line prefixed with
  // its replica as `torchx log` prints an app.
  bool all = One(query, "replica").value_or("") == "all";
  if (!all) {
    auto replica = Count(query, "replica", 0, 0, 1'000'000);
    if (!replica) return replica.error();
    opts.replica = static_cast<int>(*replica);
  }
  if (auto stream = One(query, "stream")) {
    auto parsed = schedulers::ParseLogStream(*stream);
    if (!parsed) return InvalidArgumentError("query parameter `stream`: " + parsed.error().message());
    opts.stream = *parsed;
  }
  // Filtered by the Runner (RE2: linear in the line, no recursion); a bad pattern is refused here,
  // before the stream opens, naming the query parameter.
  if (auto regex = One(query, "regex"); regex && !regex->empty()) {
    if (auto checked = schedulers::LineFilter::Compile(*regex); !checked) {
      std::string why = checked.error().message();
      if (why.rfind("regex: ", 0) == 0) why.erase(0, 7);
      return InvalidArgumentError("query parameter `regex`: " + why);
    }
    opts.regex = *regex;
  }
  auto follow = Flag(query, "follow");
  if (!follow) return follow.error();
  opts.follow = *follow;
  if (query.count("attempt")) {
    auto attempt = Count(query, "attempt", 0, 0, 1'000'000);
    if (!attempt) return attempt.error();
    opts.attempt = static_cast<int>(*attempt);
  }

  OpenedLog log{MakeRunner(), nullptr, handle, *follow};
  auto status = log.runner->Status(handle);
  if (!status) return status.error();
  if (!*status) return NotFoundError("app not found: " + handle);
  opts.role = One(query, "role").value_or("");
  auto driver = Flag(query, "driver");  // a composite's own log (its driver's)
  if (!driver) return driver.error();
  if (*driver) {
    if (query.count("replica") || query.count("stream") || opts.attempt || !opts.role.empty()) {
      return InvalidArgumentError(
          "query parameter `driver`: the composite's own log takes no role, replica, stream or attempt");
    }
    opts.driver = true;
    auto lines = log.runner->LogLines(handle, opts);
    if (!lines) return lines.error();
    log.lines = std::move(*lines);
    return log;
  }
  if (all) {
    if (opts.attempt) return InvalidArgumentError("query parameter `attempt`: names one replica's run; give `replica`");
    // The replicas the app was submitted with (as `torchx log` reads them), not those a status
    // happens to list.
    auto app = log.runner->Describe(handle);
    if (!app) return app.error();
    if (!*app) return NotFoundError("app not found: " + handle);
    std::vector<schedulers::PrefixedLog> logs;
    for (const specs::Role& role : (*app)->roles) {
      if (!opts.role.empty() && role.name != opts.role) continue;
      for (int id = 0; id < role.num_replicas; ++id) {
        schedulers::LogOptions one = opts;
        one.role = role.name;
        one.replica = id;
        auto lines = log.runner->LogLines(handle, one);
        if (!lines) return lines.error();
        logs.push_back({role.name + "/" + std::to_string(id) + " ", std::move(*lines)});
      }
    }
    if (logs.empty())
      return NotFoundError("app " + handle + " has no replicas" + (opts.role.empty() ? "" : " in role " + opts.role));
    log.lines = schedulers::MakeMergedLogIterator(std::move(logs));
    return log;
  }
  if (opts.role.empty()) {
    if ((*status)->roles.empty()) return NotFoundError("app " + handle + " has no roles to read logs of");
    opts.role = (*status)->roles.front().role;
  }
  auto lines = log.runner->LogLines(handle, opts);
  if (!lines) return lines.error();
  log.lines = std::move(*lines);
  return log;
}

bool AppEnded(runner::Runner& runner, const std::string& handle) {
  auto status = runner.Status(handle);
  return !status || !*status || (*status)->is_terminal();
}

Result<std::vector<std::string>> UiSchedulers(const std::vector<std::string>& known, const config::TorchxConfig& config,
                                              const std::vector<std::string>& extra,
                                              const std::vector<std::string>& composites) {
  std::vector<std::string> out;
  auto add = [&out](const std::string& name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  const std::string default_scheduler = plugins::DefaultSchedulerName();
  if (std::find(known.begin(), known.end(), default_scheduler) != known.end()) add(default_scheduler);
  for (const std::string& name : composites) {
    if (std::find(known.begin(), known.end(), name) != known.end()) add(name);
  }
  for (const std::string& section : config.SectionNames()) {
    if (std::find(known.begin(), known.end(), section) != known.end()) add(section);
  }
  for (const std::string& name : extra) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return NotFoundError("-s/--scheduler: unknown scheduler '" + name + "'." +
                           internal::SuggestionSuffix(name, known));
    }
    add(name);
  }
  return out;
}

}  // namespace torchx::ui
