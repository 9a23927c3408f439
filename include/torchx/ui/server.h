// `torchx ui`: the dashboard's HTTP server (REST API, live streams, the pages). docs/ui.md has
// the API and the security rules. The server keeps no state of its own: the schedulers (and
// local_cwd's store) are the truth, so a restart loses nothing.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "torchx/config/torchx_config.h"
#include "torchx/plugins/registry.h"
#include "torchx/runner/runner.h"
#include "torchx/status.h"

namespace torchx::ui {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8480;  ///< 0: any free port (Bind says which)
  /// The schedulers the apps page lists (UiSchedulers in the CLI).
  std::vector<std::string> schedulers;
  runner::RunnerOptions runner_options;
  config::TorchxConfig config;
  /// Where the API token is kept (0600; default ~/.config/torchx/ui-token). Off loopback it is
  /// required on every request; on loopback, scripts that change things send it.
  std::string token_file;
  /// Require the token on every request on loopback too: on a shared machine (a login node)
  /// every user reaches its loopback addresses.
  bool token_required = false;
  /// More names the Host header may carry on loopback (an alias in /etc/hosts).
  std::vector<std::string> extra_hosts;
  size_t max_body_bytes = 1 << 20;  ///< larger request bodies are answered 413
  size_t max_streams = 64;          ///< followed logs and event streams open at once (each holds a thread)
  /// Connections served at once. A browser keeps its connections open between requests, each
  /// holding a thread: 32 left the 33rd of 50 open pages waiting for one to close (up to 30 s).
  size_t threads = 256;
  /// Threads that answer API calls (src/ui/api_workers.h): connections wait their turn for one.
  size_t api_workers = 4;
  /// Directories besides the working directory whose component files the pages may load (a
  /// file elsewhere is 403: loading one runs its code).
  std::vector<std::string> component_dirs;
  /// Each call into a Python component file stops after this (504): its module runs at import.
  std::chrono::milliseconds component_load_timeout{10'000};
  /// A request's head must arrive whole within this of its first byte (else 408 and the
  /// connection closed), and its body within this of the head; it holds no thread meanwhile.
  std::chrono::milliseconds request_deadline{10'000};
  /// Connections waiting for their next request at most (src/ui/waiting_room.h).
  size_t max_waiting = 4096;
};

/// The schedulers `torchx ui` lists: local_cwd, the `composites` (pipelines: their steps are shown
/// nested under them), those with a section in `config`, and `extra`, each once, only names
/// `known` has. Unknown names in `extra` are kNotFound naming the choices.
Result<std::vector<std::string>> UiSchedulers(const std::vector<std::string>& known, const config::TorchxConfig& config,
                                              const std::vector<std::string>& extra,
                                              const std::vector<std::string>& composites = {});

class Server {
 public:
  /// `registry` must outlive the Server.
  Server(plugins::PluginRegistry& registry, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds the address (and, off loopback, loads or creates the token). Errors name the address.
  Status Bind();
  int port() const;
  /// The URL to open (with ?token= off loopback).
  std::string url() const;
  /// Whether every request needs the token (off loopback, or token_required).
  bool token_required() const;
  /// Where the API token is kept (0600): scripts send it as `Authorization: Bearer <token>`.
  const std::string& token_file() const;
  /// Serves until Stop(); returns when every connection is closed.
  Status Run();
  /// From any thread (a signal-handling thread): ends Run and every open stream.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace torchx::ui
