// `torchx plugins [--json] [--type T]`: the plugin registry's report: what was found (built-in,
// native libraries, Python), from where, what failed to load and why, and the time it took.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "exit_codes.h"
#include "torchx/plugins/registry.h"

namespace torchx::cli {

Handler AddPluginsCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  auto json = std::make_shared<bool>(false);
  auto type = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("plugins", "Show the plugins found, where from, and what failed to load");
  cmd->add_flag("--json", *json, "Print the report as JSON");
  cmd->add_option("--type", *type,
                  "Only list plugins of this type (scheduler, tracker, named_resource, component, device)");
  return [json, type, &registry] {
    if (!type->empty()) {
      auto t = plugins::ParsePluginType(*type);
      if (!t) return ReportError(t.error());
      for (const auto& p : registry.Info(*t)) std::printf("%-28s %s\n", p.name.c_str(), p.source.c_str());
      return kExitOk;
    }
    std::string out = *json ? registry.ReportJson() + "\n" : registry.Report();
    std::fputs(out.c_str(), stdout);
    return kExitOk;
  };
}

}  // namespace torchx::cli
