// `torchx builtins [--print NAME]`: lists the builtin components, or shows one's definition.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "commands.h"
#include "exit_codes.h"
#include "torchx/components/component.h"
#include "torchx/runner/runner.h"

namespace torchx::cli {

Handler AddBuiltinsCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  auto print = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("builtins", "List the builtin components");
  cmd->add_option("--print", *print, "Print the definition of a builtin component");
  return [print, &registry] {
    runner::Runner runner(registry);
    if (!print->empty()) {
      auto c = runner.Component(*print);
      if (!c) return ReportError(c.error());
      std::fputs(components::ComponentSignature((*c)->spec()).c_str(), stdout);
      return kExitOk;
    }
    // Builtins and components from native plugins, listed alike.
    auto names = runner.ComponentNames();
    std::printf("Found %zu builtin components:\n", names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      auto c = runner.Component(names[i]);
      std::printf("%3zu. %-20s %s\n", i + 1, names[i].c_str(), c ? (*c)->spec().summary.c_str() : "");
    }
    return kExitOk;
  };
}

}  // namespace torchx::cli
