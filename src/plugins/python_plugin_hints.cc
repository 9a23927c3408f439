#include "plugins/python_plugin_hints.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/python_bridge.h"
#include "core/state_dir.h"
#include "core/strings.h"
#include "core/subprocess.h"

namespace torchx::plugins {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr std::string_view kSchedulerGroup = "torchx.schedulers";
constexpr int kCacheVersion = 1;

// A directory's modification time in ns (-1 when missing): an install or removal of a
// distribution adds or removes an entry, which changes it.
int64_t MtimeNs(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// The interpreter as a file: a bare name is looked up on PATH, as the bridge's exec will.
std::string ResolveOnPath(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  for (const std::string& dir : internal::SplitAny(path ? path : "", ":")) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// What decides the interpreter's sys.path besides its own files: its environment, and the
// working directory where PYTHONPATH names a relative directory (Python makes it absolute).
std::string CacheKey(const std::string& python) {
  std::string key = fmt::format("{}@{}", python, MtimeNs(python));
  for (const char* var : {"PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONNOUSERSITE", "VIRTUAL_ENV", "HOME",
                          "PYENV_VERSION", "TORCHX_NO_ENTRYPOINTS"}) {
    const char* v = std::getenv(var);
    key += fmt::format("|{}={}", var, v ? v : "");
  }
  const char* pythonpath = std::getenv("PYTHONPATH");
  for (const std::string& entry : internal::SplitAny(pythonpath ? pythonpath : "", ":")) {
    if (pythonpath && (entry.empty() || entry[0] != '/')) {
      std::error_code ec;
      key += "|cwd=" + fs::current_path(ec).string();
      break;
    }
  }
  return key;
}

// The bridge's interpreter also has its working directory on sys.path (it runs `python -c`):
// a plugin package there is looked for on every call, not cached.
bool PluginPackageHere() {
  std::error_code ec;
  return fs::is_directory(fs::path("torchx_plugins") / "schedulers", ec);
}

std::optional<std::vector<std::string>> AskSysPath(const std::string& python) {
  auto res = internal::RunCommand({python, "-c", "import json, sys; print(json.dumps(sys.path[1:]))"}, {},
                                  std::chrono::seconds(30));
  if (!res || res->exit_code != 0) return std::nullopt;
  Json path = Json::parse(res->out, nullptr, false);
  if (!path.is_array()) return std::nullopt;
  std::vector<std::string> dirs;
  for (const Json& d : path) {
    if (d.is_string() && !d.get<std::string>().empty()) dirs.push_back(d.get<std::string>());
  }
  return dirs;
}

}  // namespace

std::vector<std::string> EntryPointNames(std::string_view text, std::string_view group) {
  std::vector<std::string> names;
  bool in_group = false;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    std::string_view l = internal::Strip(line);
    if (l.empty() || l[0] == '#' || l[0] == ';') continue;
    if (l.front() == '[') {
      in_group = l.back() == ']' && internal::Strip(l.substr(1, l.size() - 2)) == group;
      continue;
    }
    auto eq = l.find('=');
    if (in_group && eq != std::string_view::npos) {
      std::string_view name = internal::Strip(l.substr(0, eq));
      if (!name.empty()) names.emplace_back(name);
    }
  }
  return names;
}

PythonPluginHints ScanPythonPluginHints(const std::vector<std::string>& dirs, bool entry_points) {
  PythonPluginHints hints;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (fs::is_directory(fs::path(dir) / "torchx_plugins" / "schedulers", ec)) hints.plugin_packages = true;
    if (!entry_points) continue;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (!name.ends_with(".dist-info") && !name.ends_with(".egg-info")) continue;
      std::ifstream f(it->path() / "entry_points.txt");
      if (!f) continue;
      std::stringstream text;
      text << f.rdbuf();
      for (std::string& n : EntryPointNames(text.str(), kSchedulerGroup)) hints.scheduler_entry_points.insert(n);
    }
  }
  return hints;
}

PythonPluginHints CachedPythonPluginHints() {
  std::string python = ResolveOnPath(internal::PythonInterpreter());
  if (python.empty()) return {};
  const bool entry_points = std::getenv("TORCHX_NO_ENTRYPOINTS") == nullptr;
  std::string key = CacheKey(python);
  fs::path cache = fs::path(internal::DefaultStateDir()) / "cache" / "python-plugins.json";

  if (std::ifstream f(cache); f) {
    Json c = Json::parse(f, nullptr, false);
    bool valid = c.is_object() && c.value("version", 0) == kCacheVersion && c.value("key", "") == key &&
                 c.contains("mtimes") && c["mtimes"].is_object();
    if (valid) {
      for (const auto& [dir, mtime] : c["mtimes"].items()) {
        if (!mtime.is_number_integer() || mtime.get<int64_t>() != MtimeNs(dir)) valid = false;
      }
    }
    if (valid) {
      PythonPluginHints hints;
      hints.plugin_packages = c.value("plugin_packages", false) || PluginPackageHere();
      for (const Json& n : c.value("entry_points", Json::array())) {
        if (n.is_string()) hints.scheduler_entry_points.insert(n.get<std::string>());
      }
      return hints;
    }
  }

  // An interpreter that cannot say (the bridge would not start either) has nothing to shadow a
  // built-in; that is kept too, so that each call does not ask again, until the key changes.
  std::vector<std::string> dirs = AskSysPath(python).value_or(std::vector<std::string>{});
  Json mtimes = Json::object();
  for (const std::string& d : dirs) mtimes[d] = MtimeNs(d);  // before the scan: a change during it reads as stale
  PythonPluginHints hints = ScanPythonPluginHints(dirs, entry_points);
  Json c = {{"version", kCacheVersion},
            {"key", key},
            {"mtimes", std::move(mtimes)},
            {"entry_points", hints.scheduler_entry_points},
            {"plugin_packages", hints.plugin_packages}};
  if (internal::CreatePrivateDirs(cache.parent_path().string())) {  // a cache: failing to write it costs only time
    fs::path tmp = cache;
    tmp += fmt::format(".{}.tmp", ::getpid());
    std::error_code ec;
    bool written = false;
    if (std::ofstream out(tmp); out << c.dump()) {
      out.close();
      written = static_cast<bool>(out);
    }
    if (written) fs::rename(tmp, cache, ec);
    if (!written || ec) fs::remove(tmp, ec);
  }
  hints.plugin_packages = hints.plugin_packages || PluginPackageHere();
  return hints;
}

}  // namespace torchx::plugins
