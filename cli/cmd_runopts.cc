// `torchx runopts [SCHEDULER] [--json]` and `torchx configure [-s a,b] [--print] [-a]`.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "exit_codes.h"

namespace torchx::cli {

Handler AddRunoptsCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  struct Opts {
    std::string scheduler;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("runopts", "Show the options each scheduler accepts");
  cmd->add_option("scheduler", o->scheduler, "Only this scheduler");
  cmd->add_flag("--json", o->json, "Print JSON");
  return [o, &registry] {
    runner::Runner runner(registry);
    std::vector<std::string> names =
        o->scheduler.empty() ? runner.SchedulerBackends() : std::vector<std::string>{o->scheduler};
    nlohmann::json all = nlohmann::json::object();
    for (const std::string& name : names) {
      auto opts = runner.SchedulerRunOpts(name);
      // Listing every scheduler: one that cannot be made (a plugin whose factory raises) is named
      // as broken, with its own error, and the others are listed; asked for by name, it fails.
      if (!opts && !o->scheduler.empty()) return ReportError(opts.error());
      if (!opts) {
        if (o->json) {
          std::fprintf(stderr, "torchx: warning: scheduler `%s` is broken: %s\n", name.c_str(),
                       opts.error().message().c_str());
        } else {
          std::printf("%s:\n    broken: %s\n\n", name.c_str(), opts.error().message().c_str());
        }
        continue;
      }
      if (o->json) {
        nlohmann::json j = nlohmann::json::object();
        for (const auto& [key, opt] : opts->options()) {
          j[key] = {{"type", std::string(specs::CfgTypeName(opt.type))},
                    {"required", opt.is_required},
                    {"default", specs::CfgValToString(opt.default_value)},
                    {"help", opt.help}};
        }
        all[name] = j;
      } else {
        bool tty = StdoutIsTerminal();
        std::printf("%s%s:%s\n%s\n\n", tty ? "\033[32m" : "", name.c_str(), tty ? "\033[0m" : "",
                    opts->Render().c_str());
      }
    }
    if (o->json) std::puts(all.dump(2).c_str());
    return kExitOk;
  };
}

Handler AddConfigureCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  struct Opts {
    std::vector<std::string> schedulers;
    bool print = false;
    bool all = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("configure", "Write a .torchxconfig with the schedulers' options");
  cmd->add_option("-s,--schedulers", o->schedulers, "Schedulers to include (comma-separated; default all)")
      ->delimiter(',');
  cmd->add_flag("--print", o->print, "Print instead of writing ./.torchxconfig");
  cmd->add_flag("-a,--all", o->all, "Include optional options with their defaults");
  return [o, &registry] {
    runner::Runner runner(registry);
    std::vector<std::string> names = o->schedulers.empty() ? runner.SchedulerBackends() : o->schedulers;
    std::vector<std::pair<std::string, specs::RunOpts>> sections;
    for (const std::string& name : names) {
      auto opts = runner.SchedulerRunOpts(name);
      if (!opts && !o->schedulers.empty()) return ReportError(opts.error());
      if (!opts) {  // every scheduler: a broken plugin is left out, and said so
        std::fprintf(stderr, "torchx: warning: scheduler `%s` is broken and left out: %s\n", name.c_str(),
                     opts.error().message().c_str());
        continue;
      }
      sections.emplace_back(name, *opts);
    }
    std::string text = config::DumpConfig(sections, o->all);
    if (o->print) {
      std::fputs(text.c_str(), stdout);
      return kExitOk;
    }
    std::string tmp = ".torchxconfig.tmp";
    {
      std::ofstream out(tmp);
      out << text;
      if (!out) return ReportError(UnavailableError("configure: cannot write ./.torchxconfig"));
    }
    // TorchX overwrites an existing file; the old one is kept beside it first, and said where.
    std::string saved;
    std::error_code ec;
    if (std::filesystem::exists(".torchxconfig", ec)) {
      saved = ".torchxconfig.bak";
      for (int i = 1; std::filesystem::exists(saved, ec); ++i) saved = ".torchxconfig.bak." + std::to_string(i);
      std::filesystem::copy_file(".torchxconfig", saved, ec);
      if (ec) {
        std::remove(tmp.c_str());
        return ReportError(UnavailableError(fmt::format(
            "configure: cannot keep the existing ./.torchxconfig as ./{}: {}; nothing written", saved, ec.message())));
      }
    }
    if (std::rename(tmp.c_str(), ".torchxconfig") != 0) {
      return ReportError(UnavailableError("configure: cannot write ./.torchxconfig"));
    }
    if (saved.empty()) {
      std::fprintf(stderr, "torchx: wrote ./.torchxconfig\n");
    } else {
      std::fprintf(stderr, "torchx: wrote ./.torchxconfig (the previous one is kept as ./%s)\n", saved.c_str());
    }
    return kExitOk;
  };
}

}  // namespace torchx::cli
