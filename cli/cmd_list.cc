// `torchx list [-s SCHEDULER] [--state S,...] [--name TEXT] [--since T] [--limit N] [--json]`: the
// apps a scheduler knows (without -s, the pipelines and sweeps too, their children nested), newest first, with
// TorchX's three columns and then when each started, how long it ran, who submitted it and why it
// failed, where the scheduler says.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <iterator>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "exit_codes.h"
#include "torchx/plugins/registry.h"
#include "torchx/runner/app_filter.h"

namespace torchx::cli {
namespace {

std::string Started(const std::optional<double>& t) {
  if (!t) return "-";
  std::time_t secs = static_cast<std::time_t>(*t);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string Duration(const schedulers::ListAppResponse& a, double now) {
  if (!a.created) return "-";
  double secs = (a.ended ? *a.ended : now) - *a.created;
  if (secs < 0) secs = 0;
  std::string d = secs < 60 ? fmt::format("{:.1f}s", secs)
                  : secs < 3600
                      ? fmt::format("{}m{:02}s", static_cast<int>(secs) / 60, static_cast<int>(secs) % 60)
                      : fmt::format("{}h{:02}m", static_cast<int>(secs) / 3600, static_cast<int>(secs) % 3600 / 60);
  return a.ended || specs::IsTerminal(a.state) ? d : d + " so far";
}

}  // namespace

Handler AddListCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  struct Opts {
    std::string scheduler = plugins::DefaultSchedulerName();
    bool json = false;
    std::vector<std::string> states;
    std::string name, since;
    int limit = 0;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("list", "List apps on a scheduler");
  CLI::Option* scheduler_opt =
      cmd->add_option("-s,--scheduler", o->scheduler,
                      "Scheduler (default: the default one's apps and every composite job (pipelines, "
                      "sweeps, managed jobs), each with its children nested)")
          ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_option("--state", o->states, "Only apps in these states (comma-separated: RUNNING,FAILED,...)")
      ->delimiter(',');
  cmd->add_option("--name", o->name, "Only apps whose name or id contains this (any case)");
  cmd->add_option("--since", o->since,
                  "Only apps submitted since: epoch seconds, 2026-11-26T10:00:00[Z], or a duration ago (10m, 2h, 1d)");
  cmd->add_option("--limit", o->limit, "At most this many, the newest")->check(CLI::PositiveNumber.description(""));
  return [o, scheduler_opt, &registry] {
    runner::AppFilter filter;
    for (std::string s : o->states) {
      for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));  // any case
      auto state = specs::ParseAppState(s);
      if (!state) return ReportError(InvalidArgumentError("list: --state: " + state.error().message()));
      filter.states.insert(*state);
    }
    filter.name = o->name;
    double now = static_cast<double>(std::time(nullptr));
    if (!o->since.empty()) {
      auto since = ParseWhen("list", "--since", o->since, now);
      if (!since) return ReportError(since.error());
      filter.since = *since;
    }
    runner::Runner runner(registry, ReaderRunnerOptions());
    auto listed = runner.List(o->scheduler);
    if (!listed) return ReportError(listed.error());
    // Without -s, pipelines, sweeps and managed jobs are listed too (their children nested under them), newest
    // first across all; with -s, the one scheduler's listing as TorchX prints it.
    if (scheduler_opt->count() == 0) {
      bool added = false;
      for (const std::string& composite : registry.CompositeSchedulers()) {
        if (o->scheduler == composite) continue;
        auto composites = runner.List(composite);
        if (!composites) {
          std::fprintf(stderr, "torchx: warning: %s apps not listed: %s\n", composite.c_str(),
                       composites.error().message().c_str());
          continue;
        }
        added = added || !composites->empty();
        listed->insert(listed->end(), std::make_move_iterator(composites->begin()),
                       std::make_move_iterator(composites->end()));
      }
      if (added) {
        std::stable_sort(listed->begin(), listed->end(),
                         [](const auto& a, const auto& b) { return a.created.value_or(0) > b.created.value_or(0); });
      }
    }
    std::set<std::string> nested = runner::MemberHandles(*listed);
    std::vector<schedulers::ListAppResponse> apps;
    for (auto& a : *listed) {
      if (nested.contains(a.app_handle) || !runner::Matches(filter, a)) continue;
      apps.push_back(std::move(a));
      if (o->limit > 0 && apps.size() >= static_cast<size_t>(o->limit)) break;  // listings are newest first
    }
    if (o->json) {
      auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& a : apps) {
        nlohmann::json row = {{"app_handle", a.app_handle},
                              {"app_id", a.app_id},
                              {"name", a.name},
                              {"state", std::string(specs::AppStateName(a.state))},
                              {"created", opt(a.created)},
                              {"ended", opt(a.ended)},
                              {"user", a.user},
                              {"reason", a.reason}};
        if (!a.members.empty()) {
          nlohmann::json members = nlohmann::json::array();
          for (const auto& m : a.members) members.push_back(nlohmann::json::parse(schedulers::MemberAppToJson(m)));
          row["members"] = std::move(members);
        }
        arr.push_back(std::move(row));
      }
      std::puts(arr.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      return kExitOk;
    }
    // A composite's members are rows under it, their handles marked as nested.
    std::vector<schedulers::ListAppResponse> rows;
    for (auto& a : apps) {
      std::vector<schedulers::MemberApp> members = std::move(a.members);
      rows.push_back(std::move(a));
      for (size_t i = 0; i < members.size(); ++i) {
        schedulers::ListAppResponse m;
        const char* branch = i + 1 < members.size() ? "  |- " : "  `- ";
        m.app_handle = branch + (members[i].app_handle.empty() ? "(not submitted)" : members[i].app_handle);
        m.name = members[i].name;
        m.state = members[i].state;
        m.created = members[i].submitted;
        m.ended = members[i].ended;
        m.reason = members[i].state == specs::AppState::kSucceeded ? "" : members[i].msg;
        rows.push_back(std::move(m));
      }
    }
    apps = std::move(rows);
    bool color = UseColor();
    bool history = false;  // the extra columns, where the scheduler says any of them
    for (const auto& a : apps) history |= a.created.has_value() || !a.user.empty();
    size_t w_handle = 10, w_name = 8, w_state = 10, w_user = 4, w_dur = 8;
    for (const auto& a : apps) {
      w_handle = std::max(w_handle, a.app_handle.size());
      w_name = std::max(w_name, a.name.size());
      if (history) {
        w_user = std::max(w_user, a.user.size());
        w_dur = std::max(w_dur, Duration(a, now).size());
      }
    }
    // Padded by hand: fmt's width counts code points, a tenth of `list` with 10,000 apps, and
    // handles and app names are ASCII (AppDef validation).
    std::string out;
    out.reserve((w_handle + w_name + (history ? 90 : 16)) * (apps.size() + 2));
    auto cell = [&out](std::string_view text, size_t width, char fill) {
      out += text;
      out.append(width > text.size() ? width - text.size() : 0, fill);
      out += "  ";
    };
    auto end_line = [&out] {
      while (!out.empty() && out.back() == ' ') out.pop_back();
      out += '\n';
    };
    cell("APP HANDLE", w_handle, ' ');
    cell("APP NAME", w_name, ' ');
    if (!history) {
      out += "APP STATUS\n";
    } else {
      cell("APP STATUS", w_state, ' ');
      cell("STARTED", 19, ' ');
      cell("DURATION", w_dur, ' ');
      cell("USER", w_user, ' ');
      out += "REASON";
      end_line();
    }
    cell("", w_handle, '-');
    cell("", w_name, '-');
    if (!history) {
      out += "----------\n";
    } else {
      cell("", w_state, '-');
      cell("", 19, '-');
      cell("", w_dur, '-');
      cell("", w_user, '-');
      out += "------\n";
    }
    for (const auto& a : apps) {
      cell(a.app_handle, w_handle, ' ');
      cell(a.name, w_name, ' ');
      if (!history) {
        out += ColorState(specs::AppStateName(a.state), a.state, color);
        out += '\n';
        continue;
      }
      std::string_view state = specs::AppStateName(a.state);
      out += ColorState(state, a.state, color);  // padded after: the codes take no columns
      out.append(w_state - std::min(w_state, state.size()) + 2, ' ');
      cell(Started(a.created), 19, ' ');
      cell(Duration(a, now), w_dur, ' ');
      cell(a.user.empty() ? "-" : a.user, w_user, ' ');
      std::string reason = a.reason.substr(0, a.reason.find('\n'));
      if (reason.size() > 80) reason = reason.substr(0, 77) + "...";
      out += reason;
      end_line();
    }
    std::fputs(out.c_str(), stdout);
    return kExitOk;
  };
}

}  // namespace torchx::cli
