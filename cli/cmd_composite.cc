// `torchx composite run KIND FILE [-s S] [-cfg k=v,...] [--name N] [--dryrun] [--wait]`: runs a
// composite of any kind this build has, or a kind module adds ($TORCHX_COMPOSITE_KINDS), from its
// document, through the same launch entry as `pipeline run` and `sweep run`; `torchx composite
// kinds` lists the kinds. Names no kind: a kind added as a module is launched with no line here.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "composite_launch.h"
#include "exit_codes.h"
#include "torchx/composite_kinds.h"
#include "torchx/plugins/registry.h"

namespace torchx::cli {

Handler AddCompositeCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  auto opts = std::make_shared<DocumentRunOptions>();
  auto list = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("composite", "Run a composite job of any kind from its file");
  cmd->require_subcommand(1);
  CLI::App* run = cmd->add_subcommand("run", "Validate a composite's file, then submit it (prints its handle)");
  run->add_option("kind", opts->kind, "The composite's kind (`torchx composite kinds` lists them)")->required();
  run->add_option("file", opts->file, "Its file (YAML or JSON), as the kind reads it")->required();
  run->add_option("-s,--scheduler", opts->scheduler,
                  "Scheduler for children that name none (default: the file's, else [cli:run] scheduler, else " +
                      plugins::DefaultSchedulerName() + ")");
  run->add_option("--cfg,--scheduler_args", opts->cfg, "Options for the children on that scheduler: k1=v1,k2=v2");
  run->add_option("--name", opts->name, "Its name (default: the file's `name`)");
  run->add_flag("--dryrun", opts->dryrun, "Validate and print every child's request; submit nothing");
  run->add_flag("--wait", opts->wait, "Wait for it to end; exit 0 only if it succeeded");
  CLI::App* kinds = cmd->add_subcommand("kinds", "List the composite kinds this build has (and kind modules add)");
  kinds->callback([list] { *list = true; });
  return [opts, list, &registry] {
    if (*list) {
      for (const std::string& k : CompositeKindNames()) std::printf("%s\n", k.c_str());
      return kExitOk;
    }
    return RunDocument(*opts, registry);
  };
}

}  // namespace torchx::cli
