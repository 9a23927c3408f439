// `torchx top HANDLE [--interval S] [-n N] [--history K] [--json]`: each replica's CPU, memory and
// GPU figures, refreshed until the app ends (or N refreshes, or Ctrl-C). On a terminal the screen is
// redrawn in place; piped, each refresh is printed after the last (--json: one JSON document per
// line, the whole kept series each time).
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "commands.h"
#include "common.h"
#include "exit_codes.h"
#include "torchx/clock.h"
#include "torchx/schedulers/usage.h"

namespace torchx::cli {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void OnInterrupt(int) { g_interrupted = true; }

}  // namespace

Handler AddTopCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  struct Opts {
    std::string handle;
    double interval = 2;
    int iterations = 0;
    int history = 20;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("top", "Follow an app's per-replica CPU, memory and GPU use");
  cmd->add_option("app_handle", o->handle, "scheduler://session/app_id")->required();
  cmd->add_option("--interval", o->interval, "Seconds between refreshes (default 2)")
      ->check(CLI::PositiveNumber.description(""));
  cmd->add_option("-n,--iterations", o->iterations, "Stop after this many refreshes (default: until the app ends)")
      ->check(CLI::NonNegativeNumber.description(""));
  cmd->add_option("--history", o->history, "Samples drawn in the CPU history column (default 20; 0: none)")
      ->check(CLI::NonNegativeNumber.description(""));
  cmd->add_flag("--json", o->json, "One JSON line per refresh: the status and the kept samples");
  return [o, &registry] {
    runner::Runner runner(registry, ReaderRunnerOptions());
    bool tty = StdoutIsTerminal() && !o->json;
    struct sigaction sa {};
    sa.sa_handler = OnInterrupt;
    sigaction(SIGINT, &sa, nullptr);
    SystemClock clock;
    for (int n = 1;; ++n) {
      auto status = runner.Status(o->handle);
      if (!status) return ReportError(status.error());
      if (!*status) {
        ReportError(AppNotFound(o->handle));
        return kExitFailure;
      }
      auto usage = runner.ResourceUsage(o->handle);  // every kept sample: averages and peaks over them
      if (!usage) return ReportError(usage.error());
      if (!*usage) {
        ReportError(AppNotFound(o->handle));
        return kExitFailure;
      }
      const specs::AppStatus& st = **status;
      if (o->json) {
        std::string line = fmt::format(R"({{"handle": "{}", "state": "{}", "resources": {}}})", o->handle,
                                       specs::AppStateName(st.state), schedulers::UsageToJson(**usage));
        std::fputs((line + "\n").c_str(), stdout);
      } else {
        std::string screen = tty ? "\033[H\033[2J" : (n > 1 ? "\n" : "");
        screen += fmt::format("{}  {}  (every {:g}s{})\n", o->handle, specs::AppStateName(st.state), o->interval,
                              tty ? "; Ctrl-C to quit" : "");
        screen += schedulers::FormatUsage(**usage, clock.EpochSeconds(), o->history);
        std::fputs(screen.c_str(), stdout);
      }
      std::fflush(stdout);
      if (specs::IsTerminal(st.state) || (o->iterations > 0 && n >= o->iterations)) return kExitOk;
      auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(o->interval);
      while (std::chrono::steady_clock::now() < until) {
        if (g_interrupted) return kExitOk;
        runner.WaitForUpdate(o->handle, std::chrono::milliseconds(100));
        if (g_interrupted) return kExitOk;
      }
    }
  };
}

}  // namespace torchx::cli
