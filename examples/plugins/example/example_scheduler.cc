#include "example_scheduler.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace example {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// $TORCHX_EXAMPLE_NOHUP_DIR, else a per-user directory under the temp dir.
std::string DefaultRoot() {
  if (const char* d = std::getenv("TORCHX_EXAMPLE_NOHUP_DIR"); d && *d) return d;
  return (fs::temp_directory_path() / ("torchx-example-nohup-" + std::to_string(getuid()))).string();
}

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
    s.replace(pos, from.size(), to);
  return s;
}

fs::path AppDir(const std::string& app_id) {
  // The root is recorded per app in a small index next to the default root, so that any process
  // can find an app by id whatever `root` it was started with.
  fs::path index = fs::path(DefaultRoot()) / "index" / app_id;
  std::error_code ec;
  if (fs::exists(index, ec)) return fs::path(ReadFile(index));
  return fs::path(DefaultRoot()) / app_id;
}

// Starts argv detached: a session leader that runs the replica, waits for it and records its exit
// status. The caller reaps only the short-lived first child, so nothing is left to reap later.
void Launch(const std::vector<std::string>& argv, const std::vector<std::string>& env, const fs::path& base) {
  int ready[2];
  if (pipe(ready) != 0) throw std::runtime_error("pipe failed");
  pid_t first = fork();
  if (first < 0) throw std::runtime_error("fork failed");
  if (first == 0) {
    if (fork() != 0) {
      // Exit once the pid file is written, so that a cancel right after Schedule finds it.
      char c;
      close(ready[1]);
      _exit(read(ready[0], &c, 1) == 1 ? 0 : 1);
    }
    close(ready[0]);
    setsid();
    std::ofstream(base.string() + ".pid") << getpid();
    if (write(ready[1], "R", 1) != 1) _exit(1);
    close(ready[1]);
    pid_t child = fork();
    if (child == 0) {
      FILE* log = fopen((base.string() + ".log").c_str(), "w");
      if (log) {
        dup2(fileno(log), 1);
        dup2(fileno(log), 2);
      }
      std::vector<char*> a, e;
      for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
      a.push_back(nullptr);
      for (const auto& s : env) e.push_back(const_cast<char*>(s.c_str()));
      e.push_back(nullptr);
      execvpe(a[0], a.data(), e.data());
      _exit(127);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0) {
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::ofstream(base.string() + ".exit") << code;
    _exit(0);
  }
  close(ready[0]);
  close(ready[1]);
  int st = 0;
  waitpid(first, &st, 0);
}

}  // namespace

std::string NohupScheduler::RunOpts() {
  return json::array({{{"name", "root"},
                       {"type", "str"},
                       {"help", "where app state and logs are kept"},
                       {"default", nullptr},
                       {"required", false}}})
      .dump();
}

std::string NohupScheduler::DryRun(const std::string& request_json) {
  json req = json::parse(request_json);
  std::string app_id = req["app_id"];
  std::string root =
      req["cfg"].value("root", json()).is_string() ? req["cfg"]["root"].get<std::string>() : DefaultRoot();
  json replicas = json::array();
  std::string printable;
  for (const json& role : req["app"]["roles"]) {
    for (int k = 0; k < role.value("num_replicas", 1); ++k) {
      auto sub = [&](const std::string& s) {
        return Replace(Replace(s, "${app_id}", app_id), "${replica_id}", std::to_string(k));
      };
      std::vector<std::string> argv = {role["entrypoint"].get<std::string>()};
      for (const json& a : role["args"]) argv.push_back(sub(a.get<std::string>()));
      json env = json::object();
      for (auto& [key, v] : role["env"].items()) env[key] = sub(v.get<std::string>());
      replicas.push_back({{"role", role["name"]}, {"k", k}, {"argv", argv}, {"env", env}});
      printable += role["name"].get<std::string>() + "/" + std::to_string(k) + ": " + json(argv).dump() + "\n";
    }
  }
  json payload = {{"app_id", app_id}, {"name", req["app"]["name"]}, {"root", root}, {"replicas", replicas}};
  return json{{"request", "example_nohup root=" + root + "\n" + printable}, {"payload", payload.dump()}}.dump();
}

std::string NohupScheduler::Schedule(const std::string& payload_json) {
  json p = json::parse(payload_json);
  std::string app_id = p["app_id"];
  fs::path dir = fs::path(p["root"].get<std::string>()) / app_id;
  fs::create_directories(dir);
  fs::create_directories(fs::path(DefaultRoot()) / "index");
  std::ofstream(fs::path(DefaultRoot()) / "index" / app_id) << dir.string();
  std::ofstream(dir / "app.json") << p.dump();
  for (const json& r : p["replicas"]) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
    for (auto& [k, v] : r["env"].items()) env.push_back(k + "=" + v.get<std::string>());
    Launch(r["argv"].get<std::vector<std::string>>(), env,
           dir / (r["role"].get<std::string>() + "_" + std::to_string(r["k"].get<int>())));
  }
  return app_id;
}

std::string NohupScheduler::Describe(const std::string& app_id) {
  fs::path dir = AppDir(app_id);
  std::error_code ec;
  if (!fs::exists(dir / "app.json", ec)) return "null";
  json p = json::parse(ReadFile(dir / "app.json"));
  bool cancelled = fs::exists(dir / "cancelled", ec);
  json roles = json::array();
  std::map<std::string, json> by_role;
  int running = 0, failed = 0;
  for (const json& r : p["replicas"]) {
    std::string base = (dir / (r["role"].get<std::string>() + "_" + std::to_string(r["k"].get<int>()))).string();
    int state;  // AppState values
    if (fs::exists(base + ".exit", ec)) {
      state = std::stoi(ReadFile(base + ".exit")) == 0 ? 4 : (cancelled ? 6 : 5);
    } else {
      std::string pid = ReadFile(base + ".pid");
      bool alive = !pid.empty() && kill(std::stoi(pid), 0) == 0;
      state = alive ? 3 : (cancelled ? 6 : (pid.empty() ? 1 : 5));
    }
    running += state == 3 || state == 1;
    failed += state == 5;
    std::string role = r["role"];
    if (!by_role.count(role)) by_role[role] = {{"role", role}, {"replicas", json::array()}};
    by_role[role]["replicas"].push_back({{"id", r["k"]},
                                         {"state", state},
                                         {"role", role},
                                         {"hostname", "localhost"},
                                         {"structured_error_msg", "<NONE>"}});
  }
  for (auto& [name, r] : by_role) roles.push_back(r);
  std::string state = cancelled && running == 0 ? "CANCELLED"
                      : failed                  ? (running ? "RUNNING" : "FAILED")
                      : running                 ? "RUNNING"
                                                : "SUCCEEDED";
  return json{{"state", state},
              {"num_restarts", 0},
              {"roles", roles},
              {"msg", ""},
              {"structured_error_msg", "<NONE>"},
              {"url", "file://" + dir.string()}}
      .dump();
}

void NohupScheduler::Cancel(const std::string& app_id) {
  fs::path dir = AppDir(app_id);
  std::ofstream(dir / "cancelled") << "1";
  json p = json::parse(ReadFile(dir / "app.json"));
  for (const json& r : p["replicas"]) {
    std::string pid = ReadFile(dir / (r["role"].get<std::string>() + "_" + std::to_string(r["k"].get<int>()) + ".pid"));
    if (!pid.empty()) kill(-std::stoi(pid), SIGTERM);
  }
}

std::string NohupScheduler::List() {
  json out = json::array();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(DefaultRoot()) / "index", ec)) {
    std::string id = e.path().filename();
    json d = json::parse(Describe(id));
    if (d.is_null()) continue;
    json p = json::parse(ReadFile(AppDir(id) / "app.json"));
    out.push_back({{"app_id", id}, {"state", d["state"]}, {"name", p["name"]}});
  }
  return out.dump();
}

std::string NohupScheduler::Logs(const std::string& request_json) {
  json req = json::parse(request_json);
  fs::path log =
      AppDir(req["app_id"]) / (req["role"].get<std::string>() + "_" + std::to_string(req["k"].get<int>()) + ".log");
  std::error_code ec;
  if (!fs::exists(log, ec)) throw std::runtime_error("no log for " + req["role"].get<std::string>());
  return ReadFile(log);
}

}  // namespace example
