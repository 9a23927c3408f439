// torchx: PyTorch's universal job launcher. This file only wires subcommands and exit codes.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "core/spelling.h"
#include "exit_codes.h"
#include "torchx/composite_kinds.h"
#include "torchx/plugins/registry.h"
#include "torchx/version.h"

namespace {

// TorchX spells `run`'s scheduler options `-cfg`, a single-dash long name that CLI11 cannot
// declare. Rewrite it to `--cfg` within `run`'s own options only: the component and its
// arguments (from the first non-option on) are passed through untouched. A `--` among run's
// options becomes kRunArgsSeparator (commands.h).
std::vector<std::string> NormalizeArgs(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] != "run") return args;  // `sweep run`, `pipeline run`: their own options
  auto run = args.begin();
  for (auto it = run + 1; it != args.end(); ++it) {
    if (*it == "--") {
      *it = torchx::cli::kRunArgsSeparator;
      break;
    }
    if (it->empty() || (*it)[0] != '-') break;
    if (*it == "-cfg") *it = "--cfg";
    if (it->rfind("-cfg=", 0) == 0) *it = "-" + *it;
    bool takes_value = *it == "-s" || *it == "--scheduler" || *it == "--cfg" || *it == "--scheduler_args" ||
                       *it == "--workspace" || *it == "--parent_run_id" || *it == "--max_recoveries" ||
                       *it == "--recover_on" || *it == "--failover" || *it == "--start_timeout" ||
                       *it == "--checkpoint_dir";
    if (takes_value && it + 1 != args.end()) ++it;
  }
  return args;
}

// Every option name a (sub)command declares, `--long` and `-s` spellings, for "did you mean".
std::vector<std::string> OptionNames(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : cmd.get_options()) {
    for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
    for (const std::string& n : opt->get_snames()) names.push_back("-" + n);
  }
  return names;
}

// A command line CLI11 refused, said in the CLI's one voice: `torchx: error: ...`, the unknown
// option or command named with a suggestion, and where the help is; exit 2.
int UsageError(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App* verb = nullptr;
  for (const CLI::App* sub : app.get_subcommands()) verb = sub;
  std::string where = verb ? "torchx " + verb->get_name() + " --help" : "torchx --help";
  std::string msg = e.what();
  if (verb && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    for (const std::string& extra : verb->remaining()) {
      if (extra.size() > 1 && extra[0] == '-') {
        std::string name = extra.substr(0, extra.find('='));
        msg = "unknown option `" + name + "` for `torchx " + verb->get_name() + "`." +
              torchx::internal::DidYouMeanSuffix(name, OptionNames(*verb));
        break;
      }
    }
  }
  std::fprintf(stderr, "torchx: error: %s\nSee `%s`.\n", msg.c_str(), where.c_str());
  return torchx::cli::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace torchx::cli;
  // `torchx --version` is what scripts and wrappers call to probe the launcher: answered before
  // the command tree and the registry are built (about a third of a bare call's time).
  if (argc == 2 && (std::string_view(argv[1]) == "--version" || std::string_view(argv[1]) == "version")) {
    std::printf("torchx-%s\n", TORCHX_VERSION_STRING);
    return kExitOk;
  }
  try {
    CLI::App app("torchx: launch PyTorch jobs locally and on clusters", "torchx");
    app.require_subcommand(0, 1);
    bool show_version = false;
    app.add_flag("--version", show_version, "Print the version and exit");

    // The composition root: the one registry every verb resolves names through. Native plugins
    // are searched, and Python plugins asked for, only when a name is not built in (or by
    // `torchx plugins`).
    torchx::plugins::PluginRegistry registry;
    torchx::plugins::RegisterBuiltins(registry);
    torchx::plugins::AddPythonBridgeProvider(registry);
    torchx::RegisterCompositeKinds(registry);

    // A command line that names its verb builds that verb's options only: the others' (about a
    // third of a `torchx status`'s instructions) are built for help, completion and bare calls.
    struct Verb {
      const char* name;
      Handler (*add)(CLI::App&, torchx::plugins::PluginRegistry&);
    };
    static constexpr Verb kVerbs[] = {{"run", AddRunCommand},
                                      {"builtins", AddBuiltinsCommand},
                                      {"status", AddStatusCommand},
                                      {"top", AddTopCommand},
                                      {"debug", AddDebugCommand},
                                      {"hosts", AddHostsCommand},
                                      {"describe", AddDescribeCommand},
                                      {"log", AddLogCommand},
                                      {"cancel", AddCancelCommand},
                                      {"delete", AddDeleteCommand},
                                      {"list", AddListCommand},
                                      {"runopts", AddRunoptsCommand},
                                      {"configure", AddConfigureCommand},
                                      {"plugins", AddPluginsCommand},
                                      {"ui", AddUiCommand},
                                      {"pipeline", AddPipelineCommand},
                                      {"sweep", AddSweepCommand},
                                      {"composite", AddCompositeCommand}};
    std::vector<std::string> args = NormalizeArgs(argc, argv);
    std::string_view first = args.empty() ? std::string_view() : std::string_view(args[0]);
    std::string_view verb = first == "stop" ? std::string_view("cancel") : first;  // cancel's alias
    std::vector<std::string> verbs = {"completion", "__complete", "stop"};
    for (const Verb& v : kVerbs) verbs.emplace_back(v.name);
    std::sort(verbs.begin(), verbs.end());
    bool named =
        verb != "completion" && verb != "__complete" && std::find(verbs.begin(), verbs.end(), verb) != verbs.end();
    std::map<std::string, Handler> handlers;
    for (const Verb& v : kVerbs) {
      if (!named || verb == v.name) handlers[v.name] = v.add(app, registry);
    }
    if (!named) handlers["completion"] = handlers["__complete"] = AddCompletionCommand(app, registry);
    app.add_subcommand("version", "Print the version");

    // An unknown command is named, with the closest one (CLI11 would list it as an extra).
    if (!first.empty() && first[0] != '-' && !handlers.count(std::string(verb)) && first != "version") {
      std::fprintf(stderr, "torchx: error: unknown command `%s`.%s\nSee `torchx --help`.\n", args[0].c_str(),
                   torchx::internal::SuggestionSuffix(args[0], verbs).c_str());
      return kExitUsage;
    }
    std::reverse(args.begin(), args.end());  // CLI11 takes the vector in reverse order
    try {
      app.parse(args);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e) == 0 ? kExitOk : kExitUsage;
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e) == 0 ? kExitOk : kExitUsage;
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e) == 0 ? kExitOk : kExitUsage;
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() == 0) return app.exit(e) == 0 ? kExitOk : kExitUsage;
      return UsageError(app, e);
    }
    if (show_version || app.got_subcommand("version")) {
      std::printf("torchx-%s\n", TORCHX_VERSION_STRING);
      return kExitOk;
    }
    for (const auto& [name, handler] : handlers) {
      if (app.got_subcommand(name)) return handler();
    }
    std::fputs(app.help().c_str(), stdout);
    return kExitFailure;  // TorchX: no subcommand prints help and exits 1
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torchx: internal error: %s\n", e.what());
    return kExitFailure;
  }
}
