// `torchx builtins [--print NAME]`: lists the builtin components, or shows one's definition.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "commands.h"
#include "exit_codes.h"
#include "torchx/components/component.h"
#include "torchx/plugins/registry.h"

namespace torchx::cli {

Handler AddBuiltinsCommand(CLI::App& app) {
  auto print = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("builtins", "List the builtin components");
  cmd->add_option("--print", *print, "Print the definition of a builtin component");
  return [print] {
    components::ComponentRegistry registry;
    components::RegisterBuiltinComponents(registry);
    if (!print->empty()) {
      auto c = registry.Find(*print);
      if (!c) {
        // Components from native plugins are listed and printed like builtins.
        if (auto p = plugins::PluginRegistry::Global().Component(*print)) {
          std::fputs(components::ComponentSignature(p->spec()).c_str(), stdout);
          return kExitOk;
        }
        return ReportError(c.error());
      }
      std::fputs(components::ComponentSignature((*c)->spec()).c_str(), stdout);
      return kExitOk;
    }
    auto& plugin_registry = plugins::PluginRegistry::Global();
    auto names = plugin_registry.Names(plugins::PluginType::kComponent);
    std::printf("Found %zu builtin components:\n", names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      auto c = plugin_registry.Component(names[i]);
      std::printf("%3zu. %-20s %s\n", i + 1, names[i].c_str(), c ? c->spec().summary.c_str() : "");
    }
    return kExitOk;
  };
}

}  // namespace torchx::cli
