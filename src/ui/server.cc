#include "torchx/ui/server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "core/cancel_scope.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/app_state.h"
#include "torchx/version.h"
#include "ui/api.h"
#include "ui/api_workers.h"
#include "ui/assets.h"
#include "ui/client_socket.h"
#include "ui/component_paths.h"
#include "ui/http_server.h"
#include "ui/security.h"

namespace torchx::ui {

namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// How often an idle stream looks for changes: a followed log with no new line checks whether its
// app ended, the apps stream re-lists. Nothing runs between streams' checks, and with no stream
// open the server does nothing at all.
constexpr auto kStreamPoll = 500ms;
constexpr auto kAppsPoll = 1000ms;
constexpr auto kKeepAlive = 15s;

// An app handle in a path: `scheme://session/app_id` (app ids have no '/'), URL-encoded by
// clients and decoded by the server before routing.
constexpr const char* kHandle = R"(([A-Za-z0-9_.-]+://[^/]*/[^/]+))";
// The longest path the API routes: a handle at its limit, its route's prefix and suffix.
constexpr size_t kMaxPathBytes = specs::kMaxAppHandleBytes + 64;

void SetJson(httplib::Response& res, const ApiResponse& r) {
  res.status = r.status;
  res.set_content(r.body, "application/json");
}

void SetError(httplib::Response& res, int status, const std::string& code, const std::string& message) {
  res.status = status;
  json body = {{"error", {{"code", code}, {"message", message}}}};
  res.set_content(Dump(body), "application/json");
}

// Whether a GET /api/v1/apps/{handle} body shows a terminal app (decided from the body sent, so
// the last event and the end agree).
bool IsTerminalState(const std::string& body) {
  json parsed = json::parse(body, nullptr, false);
  if (parsed.is_discarded()) return false;
  auto state = specs::ParseAppState(parsed["status"].value("state", ""));
  return state && specs::IsTerminal(*state);
}

Query QueryOf(const httplib::Request& req) { return Query(req.params.begin(), req.params.end()); }

std::string HostPort(const std::string& host, int port) {
  bool v6 = host.find(':') != std::string::npos && host.front() != '[';
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

// One slot of the bounded set of open streams (shared: a log pump may end after the server).
class StreamSlot {
 public:
  explicit StreamSlot(std::shared_ptr<std::atomic<size_t>> open) : open_(std::move(open)) {}
  ~StreamSlot() { open_->fetch_sub(1); }
  StreamSlot(const StreamSlot&) = delete;
  StreamSlot& operator=(const StreamSlot&) = delete;

 private:
  std::shared_ptr<std::atomic<size_t>> open_;
};

}  // namespace

struct Server::Impl {
  Impl(plugins::PluginRegistry& registry, ServerOptions opts)
      : options(std::move(opts)), api(registry, ApiOptionsOf(options)) {}

  static ApiOptions ApiOptionsOf(const ServerOptions& o) {
    ApiOptions api{o.schedulers, o.runner_options, o.config, {}};
    api.runner_options.component_load_timeout = o.component_load_timeout;
    std::error_code ec;
    api.component_roots.push_back(std::filesystem::current_path(ec));
    for (const std::string& dir : o.component_dirs) api.component_roots.emplace_back(dir);
    return api;
  }

  ServerOptions options;
  Api api;
  ApiWorkers workers{options.api_workers};  // after api: stopped before it
  // Loading a component by name or file, and a stack dump, run on threads of their own: a file
  // runs its code at import, for up to the load limit, py-spy attaches to each process, and
  // neither may hold the workers every page's calls wait for. Past kMaxComponentLoads at once, a
  // call is answered 503 at once (none waits behind a slow one).
  static constexpr int kMaxComponentLoads = 4;
  ApiWorkers loaders{kMaxComponentLoads};
  std::atomic<int> component_loads{0};

  // `call` on a loader thread, or 503 at once when kMaxComponentLoads are running; the slot is
  // given back however the call ends.
  template <class F>
  void SlowCall(httplib::Response& res, F&& call) {
    SlowCall(res, std::forward<F>(call), [] {});
  }
  // As SlowCall, calling `watch` every 200 ms while it runs.
  template <class F, class W>
  void SlowCall(httplib::Response& res, F&& call, W&& watch) {
    struct Slot {
      std::atomic<int>& n;
      ~Slot() { n.fetch_sub(1); }
    } slot{component_loads};
    if (component_loads.fetch_add(1) >= kMaxComponentLoads) {
      SetError(
          res, 503, "UNAVAILABLE",
          fmt::format(
              "{} slow calls (component loads, stack dumps, profiles, host lists) are running; try again in a moment",
              kMaxComponentLoads));
      return;
    }
    SetJson(res, loaders.RunWatched(std::forward<F>(call), std::forward<W>(watch), std::chrono::milliseconds(200)));
  }
  // A slow call whose work is wasted once its client has left (a stack dump, a profile): as
  // SlowCall, and the connection watched while it runs; once the client has closed it, the
  // call's CancelScope is cancelled, which stops the tools it runs (py-spy, srun).
  template <class F>
  void CancellableSlowCall(const httplib::Request& req, httplib::Response& res, F&& call) {
    std::optional<int> client = FindClientSocket(req.local_port, req.remote_addr, req.remote_port);
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    SlowCall(
        res,
        [&call, cancelled] {
          internal::CancelScope scope(cancelled);
          return call();
        },
        [&] {
          if (client && !cancelled->load() && ClientHasLeft(*client)) cancelled->store(true);
        });
  }
  // Connections wait for each request without a thread, and a request's head and body are read
  // within options.request_deadline (http_server.h).
  HttpServer http{
      WaitingRoomOptions{std::chrono::milliseconds(5'000), options.request_deadline, 16 * 1024, options.max_waiting},
      options.threads};
  SecurityPolicy policy;
  int port = 0;
  bool loopback = true;
  std::string token_file;
  std::atomic<bool> stopping{false};
  std::shared_ptr<std::atomic<size_t>> open_streams = std::make_shared<std::atomic<size_t>>(0);
  // Log pumps still running (Run waits for them before it returns).
  std::shared_ptr<std::atomic<int>> live_pumps = std::make_shared<std::atomic<int>>(0);
  // The apps streams' digests, by filter: the open pages with the same filter share one listing
  // per poll (50 pages each listing 10,000 apps every second would keep a core busy).
  struct SharedDigest {
    std::chrono::steady_clock::time_point taken;
    std::string digest;
  };
  std::mutex digests_mu;
  std::map<std::string, SharedDigest> digests;

  // The digest for `query`, listed at most once per kAppsPoll by all streams together.
  std::string AppsDigest(const Query& query) {
    std::string key;
    for (const auto& [k, v] : query) key += k + '\x1f' + v + '\x1e';
    auto now = std::chrono::steady_clock::now();
    {
      std::lock_guard lock(digests_mu);
      auto it = digests.find(key);
      if (it != digests.end() && now - it->second.taken < kAppsPoll - 100ms) return it->second.digest;
    }
    // Outside the lock: streams that ask at the turn of a poll each make a digest, of the one
    // listing Api::Listings() shares.
    std::string digest = workers.Run([&] { return api.AppsDigest(query); }).value_or("");
    std::lock_guard lock(digests_mu);
    if (digests.size() > 64) digests.clear();  // filters come from clients: keep the map small
    digests[key] = SharedDigest{now, digest};
    return digest;
  }

  Status SetUpPolicy() {
    loopback = IsLoopbackHost(options.host);
    policy.owner = ::getuid();
    policy.token_required = !loopback || options.token_required;
    // On loopback too: scripts change things with the token (the page uses its CSRF token).
    token_file = options.token_file.empty() ? DefaultTokenPath() : options.token_file;
    TORCHX_ASSIGN_OR_RETURN(policy.token, LoadOrCreateToken(token_file));
    TORCHX_ASSIGN_OR_RETURN(policy.csrf_token, RandomToken());
    TORCHX_ASSIGN_OR_RETURN(policy.session, RandomToken());
    if (loopback) {
      std::vector<std::string> names = {options.host, "127.0.0.1", "localhost", "::1"};
      names.insert(names.end(), options.extra_hosts.begin(), options.extra_hosts.end());
      for (const std::string& name : names) policy.allowed_hosts.insert(HostPort(name, port));
    }
    policy.cookie_name = "torchx_ui_" + std::to_string(port);
    return OkStatus();
  }

  // Takes a stream slot, or answers 503 when every slot is in use.
  std::shared_ptr<StreamSlot> OpenStream(httplib::Response& res) {
    if (open_streams->fetch_add(1) >= options.max_streams) {
      open_streams->fetch_sub(1);
      SetError(res, 503, "UNAVAILABLE",
               "too many open streams (" + std::to_string(options.max_streams) + "); close a log or page and retry");
      return nullptr;
    }
    return std::make_shared<StreamSlot>(open_streams);
  }

  // Sleeps up to `d` in steps, false once the client is gone or the server stops.
  bool Pause(httplib::DataSink& sink, std::chrono::milliseconds d) {
    for (auto left = d; left > 0ms; left -= 100ms) {
      if (stopping.load() || !sink.is_writable()) return false;
      std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(100)));
    }
    return !stopping.load() && sink.is_writable();
  }

  void Routes();
  void ServeLogs(const httplib::Request& req, httplib::Response& res, const std::string& handle);
  void ServeAppsEvents(const httplib::Request& req, httplib::Response& res);
  void ServeAppEvents(httplib::Response& res, const std::string& handle);
  void ServeAsset(const std::string& path, httplib::Response& res);
};

void Server::Impl::ServeAsset(const std::string& path, httplib::Response& res) {
  // Assets are compiled into the binary and found by exact name: no path reaches the file system.
  const Asset* asset = FindAsset(path);
  if (!asset) {
    SetError(res, 404, "NOT_FOUND", "no such page: " + path);
    return;
  }
  std::string body(asset->data);
  if (path == "index.html") {
    static const std::string kMark = "{{CSRF_TOKEN}}";
    if (size_t at = body.find(kMark); at != std::string::npos) body.replace(at, kMark.size(), policy.csrf_token);
  }
  res.set_header("Cache-Control", "no-store");
  res.set_content(body, std::string(asset->content_type));
}

namespace {

// Reads a log on a thread of its own and hands the lines to the response through a bounded
// buffer (4 MiB: a slow client holds the reader back rather than the server's memory). While a
// followed log has nothing to read, the pump checks every kStreamPoll whether its client went
// away or its app ended, instead of blocking in the back-end's wait: a client that goes away
// frees its worker, its stream slot and its reader within that time. A back-end that cannot say
// whether a read would block (files on a shared file system) is read directly, and ends with its app.
class LogPump {
 public:
  static constexpr size_t kMaxBuffered = 4 << 20;

  LogPump(std::shared_ptr<Api::OpenedLog> log, std::shared_ptr<StreamSlot> slot, std::shared_ptr<std::atomic<int>> live)
      : log_(std::move(log)), slot_(std::move(slot)), live_(std::move(live)) {
    live_->fetch_add(1);
  }
  ~LogPump() { live_->fetch_sub(1); }

  void Start(std::shared_ptr<LogPump> self) {
    std::thread([self] { self->Run(); }).detach();
  }

  // Waits up to `wait` for output; false once the log is over and everything was taken.
  bool Take(std::string& out, std::chrono::milliseconds wait) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, wait, [this] { return !buffer_.empty() || done_; });
    out.swap(buffer_);
    buffer_.clear();
    cv_.notify_all();
    return !(done_ && out.empty());
  }

  void Abandon() {
    std::lock_guard lock(mu_);
    abandoned_ = true;
    cv_.notify_all();
  }

 private:
  void Run() {
    std::string chunk;
    while (true) {
      if (log_->follow && !log_->lines->Ready()) {
        if (!AppEnded(*log_->runner, log_->handle)) {  // then the next read drains what the app left and ends
          std::unique_lock lock(mu_);
          if (cv_.wait_for(lock, kStreamPoll, [this] { return abandoned_; })) break;
          continue;
        }
      }
      chunk.clear();
      auto more = log_->lines->NextBatch([&](std::string_view line) { chunk.append(line); });
      std::unique_lock lock(mu_);
      if (!more) chunk += "torchx: error: " + more.error().message() + "\n";
      buffer_ += chunk;
      if (!more || !*more) done_ = true;
      cv_.notify_all();
      if (done_ || abandoned_) break;
      cv_.wait(lock, [this] { return buffer_.size() < kMaxBuffered || abandoned_; });
      if (abandoned_) break;
    }
    std::lock_guard lock(mu_);
    done_ = true;
    log_.reset();  // closes the reader and its Runner on this thread
    slot_.reset();
  }

  std::shared_ptr<Api::OpenedLog> log_;
  std::shared_ptr<StreamSlot> slot_;  // a pump counts as an open stream until it ends
  std::shared_ptr<std::atomic<int>> live_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string buffer_;
  bool done_ = false;
  bool abandoned_ = false;
};

}  // namespace

void Server::Impl::ServeLogs(const httplib::Request& req, httplib::Response& res, const std::string& handle) {
  auto opened = api.OpenLog(handle, QueryOf(req));
  if (!opened) return SetJson(res, ErrorResponse(opened.error()));
  bool follow = opened->follow;
  std::shared_ptr<StreamSlot> slot;
  if (follow && !(slot = OpenStream(res))) return;
  auto pump = std::make_shared<LogPump>(std::make_shared<Api::OpenedLog>(std::move(*opened)), slot, live_pumps);
  pump->Start(pump);
  res.set_header("Cache-Control", "no-store");
  // A followed log is sent as octet-stream: httplib compresses text/* for clients that accept it,
  // and its compressor holds lines back until a buffer fills, so a browser would see nothing.
  res.set_chunked_content_provider(
      follow ? "application/octet-stream" : "text/plain; charset=utf-8",
      [this, pump](size_t, httplib::DataSink& sink) {
        std::string chunk;
        bool more = pump->Take(chunk, kStreamPoll);
        if (!chunk.empty() && !sink.write(chunk.data(), chunk.size())) return false;
        if (!more) {
          sink.done();
          return true;
        }
        return !stopping.load() && sink.is_writable();
      },
      [pump](bool) { pump->Abandon(); });
}

void Server::Impl::ServeAppsEvents(const httplib::Request& req, httplib::Response& res) {
  Query query = QueryOf(req);
  // A bad filter is answered before the stream opens; the first digest is sent as the first event.
  auto first = workers.Run([&] { return api.AppsDigest(query); });
  if (!first) return SetJson(res, ErrorResponse(first.error()));
  std::shared_ptr<StreamSlot> slot = OpenStream(res);
  if (!slot) return;
  struct State {
    std::string digest;
    std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();
    bool first = true;
  };
  auto state = std::make_shared<State>();
  state->digest = std::move(*first);
  res.set_header("Cache-Control", "no-store");
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, state, slot, query](size_t, httplib::DataSink& sink) {
        // A scheduler that stops answering shows in the digest's errors; the filter was checked.
        std::string digest = state->first ? state->digest : AppsDigest(query);
        std::string out;
        if (state->first || digest != state->digest) {
          out = "event: apps\ndata: {\"changed\": true}\n\n";
        } else if (std::chrono::steady_clock::now() - state->last_write > kKeepAlive) {
          out = ": keep-alive\n\n";
        }
        state->first = false;
        state->digest = std::move(digest);
        if (!out.empty()) {
          if (!sink.write(out.data(), out.size())) return false;
          state->last_write = std::chrono::steady_clock::now();
        }
        return Pause(sink, kAppsPoll);
      },
      [state](bool) {});
}

void Server::Impl::ServeAppEvents(httplib::Response& res, const std::string& handle) {
  ApiResponse first = workers.Run([&] { return api.GetApp(handle); });
  if (first.status != 200) return SetJson(res, first);
  std::shared_ptr<StreamSlot> slot = OpenStream(res);
  if (!slot) return;
  struct State {
    std::unique_ptr<runner::Runner> runner;
    std::string last;
    std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();
  };
  auto state = std::make_shared<State>(State{api.MakeRunner(), "", std::chrono::steady_clock::now()});
  res.set_header("Cache-Control", "no-store");
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, state, slot, handle](size_t, httplib::DataSink& sink) {
        ApiResponse now = workers.Run([&] { return api.GetApp(handle); });
        if (now.body != state->last) {
          // 404: the app is gone; another error (its scheduler unreachable) is shown and retried.
          const char* event = now.status == 200 ? "app" : now.status == 404 ? "gone" : "error";
          std::string out = std::string("event: ") + event + "\ndata: " + now.body + "\n\n";
          bool terminal = now.status == 404 || (now.status == 200 && IsTerminalState(now.body));
          // The last event says so, so that the page closes its EventSource instead of reconnecting.
          if (terminal) out += "event: end\ndata: {}\n\n";
          if (!sink.write(out.data(), out.size())) return false;
          state->last = now.body;
          state->last_write = std::chrono::steady_clock::now();
          if (terminal) {
            sink.done();
            return true;
          }
        } else if (std::chrono::steady_clock::now() - state->last_write > kKeepAlive) {
          static const std::string kPing = ": keep-alive\n\n";
          if (!sink.write(kPing.data(), kPing.size())) return false;
          state->last_write = std::chrono::steady_clock::now();
        }
        if (stopping.load() || !sink.is_writable()) return false;
        // Woken by the scheduler where it can notify (a local store changed), else after
        // the poll interval.
        state->runner->WaitForUpdate(handle, 1000ms);
        return !stopping.load() && sink.is_writable();
      },
      [state](bool) {});
}

void Server::Impl::Routes() {
  http.set_pre_routing_handler([this](const httplib::Request& req,
                                      httplib::Response& res) -> httplib::Server::HandlerResponse {
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("X-Frame-Options", "DENY");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("Content-Security-Policy",
                   "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                   "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
    std::string host = req.get_header_value("Host");
    std::string origin = req.get_header_value("Origin");
    std::string site = req.get_header_value("Sec-Fetch-Site");
    std::string auth = req.get_header_value("Authorization");
    std::string token = req.get_header_value("X-Torchx-Token");
    std::string csrf = req.get_header_value("X-Torchx-CSRF");
    std::string cookie = req.get_header_value("Cookie");
    std::string query_token = req.has_param("token") ? req.get_param_value("token") : "";
    constexpr std::string_view kComponentPath = "/api/v1/components/";
    bool loads_code =
        req.path.starts_with(kComponentPath) && LoadsComponentCode(req.path.substr(kComponentPath.size()));
    RequestHeaders headers{req.method, req.path, host,   origin,      site,         auth,
                           token,      csrf,     cookie, query_token, std::nullopt, loads_code};
    if (loopback) headers.peer = LoopbackPeerUid(req.remote_addr, req.remote_port, req.local_addr, req.local_port);
    Verdict verdict = CheckRequest(policy, headers);
    if (verdict.status != 0) {
      SetError(res, verdict.status, verdict.status == 401 ? "UNAUTHENTICATED" : "PERMISSION_DENIED", verdict.message);
      if (verdict.status == 401) res.set_header("WWW-Authenticate", "Bearer");
      return httplib::Server::HandlerResponse::Handled;
    }
    // No path holds more than a handle and its route: a longer one is refused before it is routed
    // or its handle parsed (the CLI's limit, docs/cli.md "Limits").
    if (req.path.size() > kMaxPathBytes) {
      SetError(res, 414, "URI_TOO_LONG",
               fmt::format("the path is {} bytes; at most {} (an app handle is at most {} bytes)", req.path.size(),
                           kMaxPathBytes, specs::kMaxAppHandleBytes));
      return httplib::Server::HandlerResponse::Handled;
    }
    bool changes = req.method != "GET" && req.method != "HEAD" && req.method != "OPTIONS";
    // httplib bounds a body by its Content-Length only: a chunked or compressed body could grow
    // past the limit, so a request that changes anything must say its length, uncompressed.
    if (changes && req.has_header("Transfer-Encoding")) {
      SetError(res, 411, "LENGTH_REQUIRED", "send the request body with a Content-Length, not chunked");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (changes && req.has_header("Content-Encoding")) {
      SetError(res, 415, "UNSUPPORTED_MEDIA_TYPE", "send the request body uncompressed");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (verdict.set_cookie) {
      res.set_header("Set-Cookie", policy.cookie_name + "=" + policy.session + "; Path=/; HttpOnly; SameSite=Strict");
      // Off the address bar and out of the history: the same page without ?token=.
      if (!req.path.starts_with("/api/")) {
        res.status = 303;
        res.set_header("Location", req.path);
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Errors httplib answers itself (unknown path, oversized body) get the API's error form.
  http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    switch (res.status) {
      case 404:
        SetError(res, 404, "NOT_FOUND", "no such path");
        break;
      case 413:
        SetError(res, 413, "PAYLOAD_TOO_LARGE", "request body too large");
        break;
      case 414:
        SetError(res, 414, "URI_TOO_LONG", "the request's path and query are too long");
        break;
      case 405:
        SetError(res, 405, "METHOD_NOT_ALLOWED", "method not allowed");
        break;
      case 400:
        SetError(res, 400, "BAD_REQUEST", "malformed HTTP request (a POST or DELETE needs a Content-Length)");
        break;
      default:
        SetError(res, res.status, "HTTP_" + std::to_string(res.status), "request failed");
        break;
    }
    return httplib::Server::HandlerResponse::Handled;
  }));

  http.Get("/", [this](const httplib::Request&, httplib::Response& res) { ServeAsset("index.html", res); });
  http.Get(R"(/assets/(.*))",
           [this](const httplib::Request& req, httplib::Response& res) { ServeAsset(req.matches[1].str(), res); });
  http.Get("/api/v1/version", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(json({{"version", TORCHX_VERSION_STRING}, {"api", "v1"}}).dump(), "application/json");
  });
  http.Get("/api/v1/apps", [this](const httplib::Request& req, httplib::Response& res) {
    SetJson(res, workers.Run([&] { return api.ListApps(QueryOf(req)); }));
  });
  // A submit may load a component file (its code runs at import): a slow call too.
  http.Post("/api/v1/apps", [this](const httplib::Request& req, httplib::Response& res) {
    SlowCall(res, [&] { return api.SubmitApp(req.body); });
  });
  http.Get("/api/v1/events",
           [this](const httplib::Request& req, httplib::Response& res) { ServeAppsEvents(req, res); });
  http.Get(std::string("/api/v1/apps/") + kHandle + "/logs",
           [this](const httplib::Request& req, httplib::Response& res) { ServeLogs(req, res, req.matches[1].str()); });
  http.Get(std::string("/api/v1/apps/") + kHandle + "/events",
           [this](const httplib::Request& req, httplib::Response& res) { ServeAppEvents(res, req.matches[1].str()); });
  http.Get(std::string("/api/v1/apps/") + kHandle + "/resources",
           [this](const httplib::Request& req, httplib::Response& res) {
             SetJson(res, workers.Run([&] { return api.GetResources(req.matches[1].str(), QueryOf(req)); }));
           });
  // A stack dump attaches py-spy to each process: on the slow-call threads, bounded like loads.
  http.Post(std::string("/api/v1/apps/") + kHandle + "/stacks",
            [this](const httplib::Request& req, httplib::Response& res) {
              CancellableSlowCall(req, res, [&] { return api.DumpStacks(req.matches[1].str(), QueryOf(req)); });
            });
  http.Post(std::string("/api/v1/apps/") + kHandle + "/profile",
            [this](const httplib::Request& req, httplib::Response& res) {
              CancellableSlowCall(req, res, [&] { return api.ProfileApp(req.matches[1].str(), QueryOf(req)); });
            });
  // Asks each scheduler's engine (sinfo, Ray's dashboard): bounded like the other slow calls.
  http.Get("/api/v1/hosts", [this](const httplib::Request& req, httplib::Response& res) {
    SlowCall(res, [&] { return api.ListHosts(QueryOf(req)); });
  });
  http.Get(std::string("/api/v1/apps/") + kHandle + "/members",
           [this](const httplib::Request& req, httplib::Response& res) {
             SetJson(res, workers.Run([&] { return api.ListMembers(req.matches[1].str(), QueryOf(req)); }));
           });
  http.Post(std::string("/api/v1/apps/") + kHandle + "/cancel",
            [this](const httplib::Request& req, httplib::Response& res) {
              SetJson(res, workers.Run([&] { return api.CancelApp(req.matches[1].str()); }));
            });
  http.Get(std::string("/api/v1/apps/") + kHandle, [this](const httplib::Request& req, httplib::Response& res) {
    SetJson(res, workers.Run([&] { return api.GetAppShared(req.matches[1].str()); }));
  });
  http.Delete(std::string("/api/v1/apps/") + kHandle, [this](const httplib::Request& req, httplib::Response& res) {
    SetJson(res, workers.Run([&] { return api.DeleteApp(req.matches[1].str()); }));
  });
  // Anything else under apps/ is not a handle.
  auto bad_handle = [](const httplib::Request& req, httplib::Response& res) {
    SetError(res, 400, "INVALID_ARGUMENT",
             "'" + req.matches[1].str() + "' is not an app handle (scheduler://session/app_id, URL-encoded)");
  };
  http.Get(R"(/api/v1/apps/(.+))", bad_handle);
  http.Post(R"(/api/v1/apps/(.+))", bad_handle);
  http.Delete(R"(/api/v1/apps/(.+))", bad_handle);
  http.Get("/api/v1/components", [this](const httplib::Request&, httplib::Response& res) {
    SetJson(res, workers.Run([&] { return api.ListComponents(); }));
  });
  http.Get(R"(/api/v1/components/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    CancellableSlowCall(req, res, [&] { return api.GetComponent(req.matches[1].str()); });
  });
  http.Get("/api/v1/schedulers", [this](const httplib::Request&, httplib::Response& res) {
    SetJson(res, workers.Run([&] { return api.ListSchedulers(); }));
  });
}

Server::Server(plugins::PluginRegistry& registry, ServerOptions options)
    : impl_(std::make_unique<Impl>(registry, std::move(options))) {}

Server::~Server() { Stop(); }

Status Server::Bind() {
  Impl& s = *impl_;
  s.http.set_payload_max_length(s.options.max_body_bytes);
  // cpp-httplib's default also sets SO_REUSEPORT, with which a second `torchx ui` on a port in use
  // binds too and the kernel splits connections between the two servers. SO_REUSEADDR alone
  // still lets a restarted server take its port back from connections in TIME_WAIT.
  s.http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  if (s.options.port < 0 || s.options.port > 65535) {
    return InvalidArgumentError("--port must be from 0 to 65535, got " + std::to_string(s.options.port));
  }
  if (s.options.port == 0) {
    s.port = s.http.bind_to_any_port(s.options.host);
    if (s.port <= 0) return UnavailableError("cannot listen on " + s.options.host + " (any port)");
  } else {
    if (!s.http.bind_to_port(s.options.host, s.options.port)) {
      return UnavailableError("cannot listen on " + HostPort(s.options.host, s.options.port) +
                              " (in use, or not an address of this machine); pick another with --port");
    }
    s.port = s.options.port;
  }
  TORCHX_RETURN_IF_ERROR(s.SetUpPolicy());
  s.Routes();
  return s.http.StartRoom();
}

int Server::port() const { return impl_->port; }

bool Server::token_required() const { return impl_->policy.token_required; }

const std::string& Server::token_file() const { return impl_->token_file; }

std::string Server::url() const {
  std::string url = "http://" + HostPort(impl_->options.host, impl_->port) + "/";
  if (token_required()) url += "?token=" + impl_->policy.token;
  return url;
}

Status Server::Run() {
  bool listened = impl_->http.listen_after_bind();
  // Every response is closed now, so every pump was told to stop: give them a moment to end.
  for (int i = 0; i < 40 && impl_->live_pumps->load() > 0; ++i) std::this_thread::sleep_for(50ms);
  if (!listened && !impl_->stopping.load()) {
    return UnavailableError("the ui server stopped listening on " + HostPort(impl_->options.host, impl_->port));
  }
  return OkStatus();
}

void Server::Stop() {
  impl_->stopping.store(true);
  impl_->http.StopRoom();
  impl_->http.stop();
}

}  // namespace torchx::ui
