// `torchx list [-s SCHEDULER] [--json]`: the apps a scheduler knows.
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "exit_codes.h"
#include "torchx/plugins/registry.h"

namespace torchx::cli {

Handler AddListCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  struct Opts {
    std::string scheduler = plugins::DefaultSchedulerName();
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("list", "List apps on a scheduler");
  cmd->add_option("-s,--scheduler", o->scheduler, "Scheduler")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print JSON");
  return [o, &registry] {
    runner::Runner runner(registry);
    auto apps = runner.List(o->scheduler);
    if (!apps) return ReportError(apps.error());
    if (o->json) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& a : *apps) {
        arr.push_back({{"app_handle", a.app_handle},
                       {"app_id", a.app_id},
                       {"name", a.name},
                       {"state", std::string(specs::AppStateName(a.state))}});
      }
      std::puts(arr.dump(2).c_str());
      return kExitOk;
    }
    size_t w_handle = 10, w_name = 8;
    for (const auto& a : *apps) {
      w_handle = std::max(w_handle, a.app_handle.size());
      w_name = std::max(w_name, a.name.size());
    }
    // Padded by hand: fmt's width counts code points, a tenth of `list` with 10,000 apps, and
    // handles and app names are ASCII (AppDef validation).
    std::string out;
    out.reserve((w_handle + w_name + 16) * (apps->size() + 2));
    auto cell = [&out](std::string_view text, size_t width, char fill) {
      out += text;
      out.append(width > text.size() ? width - text.size() : 0, fill);
      out += "  ";
    };
    cell("APP HANDLE", w_handle, ' ');
    cell("APP NAME", w_name, ' ');
    out += "APP STATUS\n";
    cell("", w_handle, '-');
    cell("", w_name, '-');
    out += "----------\n";
    for (const auto& a : *apps) {
      cell(a.app_handle, w_handle, ' ');
      cell(a.name, w_name, ' ');
      out += specs::AppStateName(a.state);
      out += '\n';
    }
    std::fputs(out.c_str(), stdout);
    return kExitOk;
  };
}

}  // namespace torchx::cli
