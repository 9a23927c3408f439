// `torchx hosts [-s SCHEDULER] [--json]`: the hosts or nodes a scheduler runs apps on, each with its
// CPUs, memory and GPUs (capacity, and what is allocated or in use), its state, and the user's apps
// there: "where is my job, and what else is on that node?" without the engine's own tools. Without
// -s: the default scheduler and each one .torchxconfig has a section for, those that can say
// (Capability::kHosts).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "exit_codes.h"
#include "torchx/plugins/registry.h"
#include "torchx/schedulers/hosts.h"

namespace torchx::cli {

Handler AddHostsCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  struct Opts {
    std::vector<std::string> schedulers;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("hosts", "List the hosts a scheduler runs apps on: capacity, use and your apps");
  cmd->add_option("-s,--scheduler", o->schedulers,
                  "Scheduler(s) (default: the default one and each with a .torchxconfig section that can list hosts)");
  cmd->add_flag("--json", o->json, "Print JSON: one object per scheduler");
  return [o, &registry] {
    auto config = LoadConfig();
    if (!config) return ReportError(config.error());
    runner::Runner runner(registry, RunnerOptionsFrom(*config));
    std::vector<std::string> names = o->schedulers;
    bool chosen = !names.empty();
    if (!chosen) {
      std::vector<std::string> known = runner.SchedulerBackends();
      auto add = [&](const std::string& name) {
        bool is_known = std::find(known.begin(), known.end(), name) != known.end();
        if (is_known && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      };
      add(plugins::DefaultSchedulerName());
      for (const std::string& section : config->SectionNames()) add(section);
    }
    int rc = kExitOk;
    nlohmann::json all = nlohmann::json::array();
    for (const std::string& name : names) {
      auto caps = runner.SchedulerCapabilities(name);
      if (!caps) {  // one that cannot be built (its module, its engine's client) hides no other
        rc = ReportError(caps.error());
        continue;
      }
      if (!chosen && !caps->Has(schedulers::Capability::kHosts)) continue;
      auto hosts = runner.Hosts(name);
      if (!hosts) {
        // One engine that cannot be reached does not hide the others' hosts.
        rc = ReportError(hosts.error());
        continue;
      }
      if (o->json) {
        all.push_back(nlohmann::json::parse(schedulers::HostsToJson(name, *hosts)));
      } else {
        std::printf("%s%s:\n%s", &name == &names.front() ? "" : "\n", name.c_str(),
                    schedulers::FormatHosts(name, *hosts).c_str());
      }
    }
    if (o->json) std::printf("%s\n", all.dump(2).c_str());
    return rc;
  };
}

}  // namespace torchx::cli
