// torchx-ui: `torchx ui [--host H] [--port N] [-s SCHEDULER ...]`, the web dashboard and REST API
// (docs/ui.md), which `torchx ui` execs. A program of its own so that the HTTP server and the
// libraries it takes (cpp-httplib, OpenSSL, zlib, brotli) are not loaded by every CLI call.
// Serves until SIGINT or SIGTERM, then exits 0.
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "common.h"
#include "exit_codes.h"
#include "torchx/composite_kinds.h"
#include "torchx/plugins/registry.h"
#include "torchx/ui/server.h"

namespace torchx::cli {
namespace {

using Handler = std::function<int()>;

Handler AddUiOptions(CLI::App& cmd, plugins::PluginRegistry& registry) {
  struct Opts {
    std::string host = "127.0.0.1";
    int port = 8480;
    std::vector<std::string> schedulers;
    std::string token_file;
    std::vector<std::string> allow_hosts;
    std::vector<std::string> component_dirs;
    bool token_required = false;
  };
  auto o = std::make_shared<Opts>();
  cmd.add_option("--host", o->host, "Address to listen on (off loopback, every request needs the token)")
      ->capture_default_str();
  cmd.add_option("--port", o->port, "Port to listen on (0: any free port)")->capture_default_str();
  cmd.add_option(
      "-s,--scheduler", o->schedulers,
      "Also list this scheduler's apps (the default scheduler's and those configured in .torchxconfig always)");
  cmd.add_option("--token_file", o->token_file, "Where the API token is kept (default: ~/.config/torchx/ui-token)");
  cmd.add_flag("--token_required", o->token_required,
               "Require the token on every request on loopback too (a shared machine's users all reach it)");
  cmd.add_option("--allow_host", o->allow_hosts, "Another name the server is reached by on loopback");
  cmd.add_option("--component_dir", o->component_dirs,
                 "Another directory whose component files the Run page may load (besides the working directory's)")
      ->check(CLI::ExistingDirectory);
  return [o, &registry] {
    auto config = LoadConfig();
    if (!config) return ReportError(config.error());
    runner::Runner runner(registry, ReaderRunnerOptions());
    auto schedulers =
        ui::UiSchedulers(runner.SchedulerBackends(), *config, o->schedulers, registry.CompositeSchedulers());
    if (!schedulers) return ReportError(schedulers.error());

    ui::ServerOptions options;
    options.host = o->host;
    options.port = o->port;
    options.schedulers = *schedulers;
    options.runner_options = RunnerOptionsFrom(*config);
    options.config = *config;
    options.token_file = o->token_file;
    options.extra_hosts = o->allow_hosts;
    options.token_required = o->token_required;
    options.component_dirs = o->component_dirs;

    // SIGINT and SIGTERM are taken by one thread that stops the server; every other thread
    // (httplib's workers start below) has them blocked.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    signal(SIGPIPE, SIG_IGN);
    // Each open connection is a descriptor (one waiting for its next request holds no thread):
    // the soft limit raised to the hard one, so that a crowd of them does not make accept fail.
    if (rlimit lim{}; getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
      lim.rlim_cur = lim.rlim_max;
      setrlimit(RLIMIT_NOFILE, &lim);
    }
    if (rlimit lim{}; getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
      options.max_waiting = std::max<size_t>(64, lim.rlim_cur / 2);
    }

    ui::Server server(registry, options);
    if (Status s = server.Bind(); !s.ok()) return ReportError(s);
    std::string names;
    for (const std::string& s : *schedulers) names += (names.empty() ? "" : ", ") + s;
    std::printf("torchx ui: listing %s\ntorchx ui: open %s\n", names.c_str(), server.url().c_str());
    std::printf("torchx ui: scripts send `Authorization: Bearer <token>` with the token in %s%s\n",
                server.token_file().c_str(), server.token_required() ? " (also in the URL above: keep it secret)" : "");
    std::fflush(stdout);

    std::thread stopper([&server, stop_signals] {
      int sig = 0;
      sigwait(&stop_signals, &sig);
      server.Stop();
    });
    Status run = server.Run();
    // Wakes the stopper if the server ended by itself.
    pthread_kill(stopper.native_handle(), SIGTERM);
    stopper.join();
    if (!run.ok()) return ReportError(run);
    std::printf("torchx ui: stopped\n");
    return kExitOk;
  };
}

}  // namespace
}  // namespace torchx::cli

int main(int argc, char** argv) {
  using namespace torchx::cli;
  try {
    CLI::App app("Serve the web dashboard and REST API over every scheduler", "torchx ui");
    // The composition root of this program, as the CLI's main builds it.
    torchx::plugins::PluginRegistry registry;
    torchx::plugins::RegisterBuiltins(registry);
    torchx::plugins::AddPythonBridgeProvider(registry);
    torchx::RegisterCompositeKinds(registry);
    Handler handler = AddUiOptions(app, registry);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      int rc = app.exit(e);
      return rc == 0 ? kExitOk : kExitUsage;
    }
    return handler();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torchx: internal error: %s\n", e.what());
    return kExitFailure;
  }
}
