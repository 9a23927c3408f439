// `torchx completion bash|zsh|fish`: a completion script for the shell, and the hidden
// `torchx __complete verbs|components|schedulers|handles` it calls for the names that change (the
// registry's components and schedulers, the apps in the store), so the script never goes stale;
// `__complete options` prints every verb's options for the CLI fuzz stage (tests/fuzz/cli).
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "common.h"
#include "exit_codes.h"
#include "torchx/plugins/registry.h"

namespace torchx::cli {
namespace {

// Handles contain ':', which bash splits words at: bash-completion's helpers keep them whole when
// they are there.
constexpr const char* kBash = R"SH(# torchx completion for bash: eval "$(torchx completion bash)"
_torchx() {
  local cur prev
  if declare -F _get_comp_words_by_ref >/dev/null; then
    _get_comp_words_by_ref -n : cur prev
  else
    cur="${COMP_WORDS[COMP_CWORD]}"; prev="${COMP_WORDS[COMP_CWORD-1]}"
  fi
  local IFS=$'\n'
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W "$(torchx __complete verbs 2>/dev/null)" -- "$cur"))
    return
  fi
  case "$prev" in
    -s|--scheduler) COMPREPLY=($(compgen -W "$(torchx __complete schedulers 2>/dev/null)" -- "$cur")); return ;;
  esac
  case "${COMP_WORDS[1]}" in
    run)
      [[ "$cur" == -* ]] || COMPREPLY=($(compgen -W "$(torchx __complete components 2>/dev/null)" -- "$cur")) ;;
    runopts)
      COMPREPLY=($(compgen -W "$(torchx __complete schedulers 2>/dev/null)" -- "$cur")) ;;
    status|describe|log|cancel|stop|delete|top)
      [[ "$cur" == -* ]] || COMPREPLY=($(compgen -W "$(torchx __complete handles 2>/dev/null)" -- "$cur")) ;;
    completion)
      COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")) ;;
  esac
  if declare -F __ltrim_colon_completions >/dev/null; then __ltrim_colon_completions "$cur"; fi
}
complete -o default -F _torchx torchx
)SH";

// zsh runs the bash function through its bash-completion layer.
constexpr const char* kZsh = R"SH(# torchx completion for zsh: eval "$(torchx completion zsh)"
autoload -U +X bashcompinit && bashcompinit
)SH";

constexpr const char* kFish = R"SH(# torchx completion for fish: torchx completion fish | source
complete -c torchx -f
complete -c torchx -n '__fish_use_subcommand' -a '(torchx __complete verbs 2>/dev/null)'
complete -c torchx -n '__fish_seen_subcommand_from run' -a '(torchx __complete components 2>/dev/null)'
complete -c torchx -n '__fish_seen_subcommand_from runopts' -a '(torchx __complete schedulers 2>/dev/null)'
complete -c torchx -n '__fish_seen_subcommand_from status describe log cancel stop delete top' -a '(torchx __complete handles 2>/dev/null)'
complete -c torchx -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'
complete -c torchx -s s -l scheduler -x -a '(torchx __complete schedulers 2>/dev/null)'
)SH";

// A verb's grammar from its own option table, a line per option: `PATH<TAB>NAME<TAB>KIND`, KIND
// `flag`, `value` or `positional` (the CLI fuzz stage builds its command lines from it), then its
// subcommands' (`sweep run`).
void AppendGrammar(const CLI::App& cmd, const std::string& path, std::string& out) {
  for (const CLI::Option* opt : cmd.get_options()) {
    std::string name;
    if (!opt->get_lnames().empty()) {
      name = "--" + opt->get_lnames().front();
    } else if (!opt->get_snames().empty()) {
      name = "-" + opt->get_snames().front();
    } else {
      name = opt->get_name();
    }
    if (name == "--help") continue;
    const char* kind = opt->get_positional() ? "positional" : opt->get_expected_min() == 0 ? "flag" : "value";
    out += path + "\t" + name + "\t" + kind + "\n";
  }
  for (const CLI::App* sub : cmd.get_subcommands({})) AppendGrammar(*sub, path + " " + sub->get_name(), out);
}

}  // namespace

Handler AddCompletionCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  auto shell = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("completion", "Print a shell completion script (bash, zsh or fish)");
  cmd->add_option("shell", *shell, "bash, zsh or fish")->required()->check(CLI::IsMember({"bash", "zsh", "fish"}));
  auto kind = std::make_shared<std::string>();
  CLI::App* complete = app.add_subcommand("__complete", "");  // hidden: what the scripts ask
  complete->group("");
  complete->add_option("kind", *kind, "")->required();
  return [shell, kind, cmd, &app, &registry] {
    if (app.got_subcommand(cmd)) {
      std::string script = *shell == "fish" ? kFish : *shell == "zsh" ? std::string(kZsh) + kBash : kBash;
      std::fputs(script.c_str(), stdout);
      return kExitOk;
    }
    runner::Runner runner(registry);
    std::string out;
    if (*kind == "verbs") {
      for (const CLI::App* sub : app.get_subcommands({})) {
        if (!sub->get_group().empty()) out += sub->get_name() + "\n";
      }
    } else if (*kind == "components") {
      for (const std::string& name : runner.ComponentNames()) out += name + "\n";
    } else if (*kind == "schedulers") {
      for (const std::string& name : runner.SchedulerBackends()) out += name + "\n";
    } else if (*kind == "handles") {  // the default scheduler's apps, newest first
      if (auto apps = runner.List(plugins::DefaultSchedulerName())) {
        for (const auto& a : *apps) out += a.app_handle + "\n";
      }
    } else if (*kind == "options") {
      for (const CLI::App* sub : app.get_subcommands({})) {
        if (!sub->get_group().empty()) AppendGrammar(*sub, sub->get_name(), out);
      }
    } else {
      return ReportError(
          InvalidArgumentError("__complete: kind must be one of verbs, components, schedulers, handles, options"));
    }
    std::fputs(out.c_str(), stdout);
    return kExitOk;
  };
}

}  // namespace torchx::cli
