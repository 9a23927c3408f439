// `torchx log [-t] [-n N] [--since T] [--until T] [--regex R] [--streams S] [--json] [--driver]
//  SCHED://[SESSION]/APP_ID[/ROLE[/I,J,...]]`.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "common.h"
#include "exit_codes.h"
#include "log_stream.h"
#include "schedulers/line_filter.h"
#include "torchx/runner/runner.h"
#include "torchx/specs/app_handle.h"

namespace torchx::cli {
namespace {

struct Target {
  std::string handle;
  std::string role;           // empty: every role
  std::vector<int> replicas;  // empty: every replica of the role
};

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// SCHEDULER://[SESSION]/APP_ID[/ROLE[/REPLICA_IDS]][/]: SCHEDULER word characters, ROLE and
// APP_ID non-empty, REPLICA_IDS digits separated by commas. Read by splitting, in one pass: no
// pattern engine, so an identifier of any length costs linear time and no stack.
Result<Target> ParseTarget(const std::string& id) {
  auto bad = [&id] {
    std::string shown = id.size() > 80 ? id.substr(0, 80) + "..." : id;
    return InvalidArgumentError(
        fmt::format("log: `{}` is not of the form SCHEDULER://[SESSION]/APP_ID[/ROLE[/REPLICA_IDS,...]]", shown));
  };
  if (id.size() > specs::kMaxAppHandleBytes) {
    return InvalidArgumentError(fmt::format("log: the identifier is {} bytes, over the limit of {} bytes", id.size(),
                                            specs::kMaxAppHandleBytes));
  }
  size_t sep = id.find("://");
  if (sep == std::string::npos || sep == 0 || !std::all_of(id.begin(), id.begin() + sep, IsWordChar)) return bad();
  std::string_view rest = std::string_view(id).substr(sep + 3);
  if (rest.ends_with('/')) rest.remove_suffix(1);
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t slash = rest.find('/', start);
    parts.push_back(rest.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (parts.size() < 2 || parts.size() > 4 || parts[1].empty() || (parts.size() > 2 && parts[2].empty())) return bad();
  std::string ids = parts.size() > 3 ? std::string(parts[3]) : std::string();
  if (parts.size() > 3) {
    bool digit_before = false;
    for (char c : ids) {
      if (c == ',' && digit_before) {
        digit_before = false;
      } else if (c >= '0' && c <= '9') {
        digit_before = true;
      } else {
        return bad();
      }
    }
    if (!digit_before) return bad();
  }
  Target t;
  t.handle = specs::MakeAppHandle(id.substr(0, sep), parts[0], parts[1]);
  t.role = parts.size() > 2 ? std::string(parts[2]) : std::string();
  size_t start = 0;
  while (!ids.empty() && start <= ids.size()) {
    size_t comma = ids.find(',', start);
    if (comma == std::string::npos) comma = ids.size();
    std::string replica = ids.substr(start, comma - start);
    if (replica.size() > 9) {
      return InvalidArgumentError(fmt::format("log: replica id `{}` in `{}` is out of range", replica, id));
    }
    t.replicas.push_back(std::atoi(replica.c_str()));
    start = comma + 1;
  }
  return t;
}

// The schedulers whose lines `handle`'s log is: its own, or a composite's members', down to apps
// that are no composite (a pipeline step that is a sweep: its trials'). Not-yet-submitted members
// count by the scheduler they will run on.
void LineSchedulers(runner::Runner& runner, const std::string& handle, int depth, std::vector<std::string>& out) {
  auto add = [&out](const std::string& name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  auto parsed = specs::ParseAppHandle(handle);
  if (!parsed) return;
  auto caps = runner.SchedulerCapabilities(parsed->scheduler_backend);
  if (!caps || !caps->Has(schedulers::Capability::kComposite)) return add(parsed->scheduler_backend);
  if (depth >= 4) return;  // composites nest a level or two; a cycle is not followed
  auto members = runner.Members(handle);
  if (!members || !*members) return;
  for (const schedulers::MemberApp& m : **members) {
    if (!m.app_handle.empty()) {
      LineSchedulers(runner, m.app_handle, depth + 1, out);
    } else if (auto of = runner.SchedulerCapabilities(m.scheduler);
               of && !of->Has(schedulers::Capability::kComposite)) {
      add(m.scheduler);
    }
  }
}

// Some back-ends keep no time per log line (local_cwd writes plain files): --since/--until there
// would print every line as if it were the asked-for window. Refused instead, naming the
// schedulers that honour them.
Status CheckLogTimes(runner::Runner& runner, const std::string& handle) {
  std::vector<std::string> schedulers;
  LineSchedulers(runner, handle, 0, schedulers);
  for (const std::string& scheduler : schedulers) {
    auto caps = runner.SchedulerCapabilities(scheduler);
    if (!caps || caps->Has(schedulers::Capability::kLogTimestamps)) continue;
    std::string timed;
    for (const std::string& name : runner.SchedulerBackends()) {
      auto of = runner.SchedulerCapabilities(name);
      if (of && of->Has(schedulers::Capability::kLogTimestamps)) timed += (timed.empty() ? "" : ", ") + name;
    }
    return InvalidArgumentError(fmt::format(
        "log: --since/--until: scheduler `{}` keeps no time per log line, so it cannot choose lines by time; "
        "schedulers that can: {}. Use -n/--lines or --regex instead.",
        scheduler, timed.empty() ? "none registered" : timed));
  }
  return OkStatus();
}

}  // namespace

Handler AddLogCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  struct Opts {
    std::string id;
    bool tail = false;
    std::string regex;
    std::string streams = "combined";
    bool json = false;
    int lines = -1;
    int attempt = -1;
    std::string since, until;
    bool driver = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("log", "Print an app's logs");
  cmd->add_option("identifier", o->id, "SCHEDULER://[SESSION]/APP_ID[/ROLE[/REPLICA_IDS,...]]")->required();
  cmd->add_flag("-t,--tail", o->tail, "Follow the logs until the app ends");
  cmd->add_option("--regex", o->regex, "Only lines matching this regex");
  cmd->add_option("--streams", o->streams, "stdout, stderr or combined")->capture_default_str();
  cmd->add_flag("--json", o->json, "One JSON object per line");
  cmd->add_option("-n,--lines", o->lines, "Only the last N lines of each replica (then, with -t, the new ones)")
      ->check(CLI::NonNegativeNumber.description(""));
  cmd->add_option("--since", o->since,
                  "Lines from this time on: epoch seconds, 2026-11-26T10:00:00[Z], or a duration ago (10m, 2h); "
                  "on schedulers whose logs have timestamps");
  cmd->add_option("--until", o->until, "Lines up to this time (as --since)");
  cmd->add_option("--attempt", o->attempt,
                  "An earlier run of a retried replica (0 = the first; default: the latest), where the scheduler "
                  "keeps them")
      ->check(CLI::NonNegativeNumber.description(""));
  cmd->add_flag("--driver", o->driver,
                "A composite app's own log, its driver's (what it submitted, retried and decided), instead of its "
                "members'");
  return [o, &registry] {
    auto target = ParseTarget(o->id);
    if (!target) return ReportError(target.error());
    auto stream = schedulers::ParseLogStream(o->streams);
    if (!stream) return ReportError(stream.error());
    if (o->driver && (!target->role.empty() || o->attempt >= 0)) {
      return ReportError(InvalidArgumentError(
          fmt::format("log: --driver reads the composite's own log: give its handle alone ({}), without a role "
                      "or --attempt",
                      target->handle)));
    }
    // The options first: a bad one is refused (exit 2) before any scheduler is asked.
    schedulers::LogOptions opts;
    opts.driver = o->driver;
    opts.follow = o->tail;
    opts.stream = *stream;
    if (!o->regex.empty()) {
      if (auto filter = schedulers::LineFilter::Compile(o->regex); !filter) return ReportError(filter.error());
      opts.regex = o->regex;
    }
    if (o->lines >= 0) opts.last_lines = static_cast<size_t>(o->lines);
    if (o->attempt >= 0) opts.attempt = o->attempt;
    double now = static_cast<double>(std::time(nullptr));
    if (!o->since.empty()) {
      auto since = ParseWhen("log", "--since", o->since, now);
      if (!since) return ReportError(since.error());
      opts.since = *since;
    }
    if (!o->until.empty()) {
      auto until = ParseWhen("log", "--until", o->until, now);
      if (!until) return ReportError(until.error());
      opts.until = *until;
    }
    if ((opts.since || opts.until) && opts.driver) {
      return ReportError(InvalidArgumentError(
          "log: --since/--until: a driver's log keeps no time per line; use -n/--lines or --regex instead."));
    }
    runner::Runner runner(registry, ReaderRunnerOptions());
    auto all = o->driver ? Result<std::vector<ReplicaRef>>(std::vector<ReplicaRef>{ReplicaRef{}})
                         : AllReplicas(runner, target->handle);
    if (!all) {
      ReportError(all.error());
      return kExitFailure;
    }
    std::vector<ReplicaRef> selected;
    std::vector<std::string> roles;
    for (const ReplicaRef& r : *all) {
      if (roles.empty() || roles.back() != r.role) roles.push_back(r.role);
      if (!target->role.empty() && r.role != target->role) continue;
      if (!target->replicas.empty() &&
          std::find(target->replicas.begin(), target->replicas.end(), r.replica) == target->replicas.end()) {
        continue;
      }
      selected.push_back(r);
    }
    if (selected.empty()) {
      std::string list;
      for (const auto& r : roles) list += (list.empty() ? "" : ", ") + r;
      ReportError(NotFoundError(fmt::format("log: no replica matches `{}`; roles: [{}]", o->id, list)));
      return kExitFailure;
    }
    if (opts.since || opts.until) {
      if (Status s = CheckLogTimes(runner, target->handle); !s.ok()) return ReportError(s);
    }
    if (Status s = StreamLogs(registry, target->handle, selected, opts, o->json); !s.ok()) return ReportError(s);
    return kExitOk;
  };
}

}  // namespace torchx::cli
