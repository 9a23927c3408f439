// Loadable back-end modules (schedulers/backend_module.h): the registry knows each module's
// schedulers by name from the build's table, and loads the module the first time one of them is
// built, once, keeping it loaded (the schedulers' code lives there).
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "core/helper_exe.h"
#include "plugins/backend_modules.h"
#include "torchx/schedulers/backend_module.h"

namespace torchx::plugins {
namespace {

namespace fs = std::filesystem;

// One module, shared by the factories of its schedulers; loaded at most once, its failure kept.
class ModuleLoader {
 public:
  explicit ModuleLoader(std::string file) : file_(std::move(file)) {}

  Result<schedulers::SchedulerFactory> Factory(const std::string& scheduler) {
    std::lock_guard lock(mu_);
    if (!entries_) entries_ = Load(scheduler);
    if (!entries_->has_value()) return entries_->error();
    for (const schedulers::SchedulerEntry& e : **entries_) {
      if (e.name == scheduler) return e.factory;
    }
    return InternalError(fmt::format("scheduler {}: module {} does not provide it", scheduler, file_));
  }

 private:
  // The first module in the path built with this build; a module of another build (another
  // install's, a stale build tree's) is passed over, and named when no module fits.
  Result<std::vector<schedulers::SchedulerEntry>> Load(const std::string& scheduler) {
    std::vector<std::string> looked;
    std::vector<std::string> other_builds;
    for (const std::string& dir : BackendModulePath()) {
      fs::path path = fs::path(dir) / file_;
      std::error_code ec;
      looked.push_back(dir);
      if (!fs::is_regular_file(path, ec)) continue;
      // Another build's module may not even load beside this build (missing symbols): its
      // failure is recorded and the search goes on.
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // kept open once its schedulers are used
      if (!handle) {
        const char* why = dlerror();
        other_builds.push_back(fmt::format("{} (cannot load: {})", path.string(), why ? why : "?"));
        continue;
      }
      using Entry = const schedulers::BackendModule* (*)();
      auto entry = reinterpret_cast<Entry>(dlsym(handle, TORCHX_BACKEND_MODULE_SYMBOL));
      if (!entry) {
        other_builds.push_back(
            fmt::format("{} (not a torchx back-end module: no {})", path.string(), TORCHX_BACKEND_MODULE_SYMBOL));
        dlclose(handle);
        continue;
      }
      const schedulers::BackendModule* module = entry();
      if (std::string_view(module->build_id) != TORCHX_BUILD_ID) {
        other_builds.push_back(fmt::format("{} (from another build of torchx: {})", path.string(), module->build_id));
        dlclose(handle);  // nothing of it was used: only its entry point was asked for its build id
        continue;
      }
      return module->entries();
    }
    if (!other_builds.empty()) {
      return FailedPreconditionError(fmt::format(
          "scheduler {}: no back-end module {} of this build of torchx ({}) was found; passed over: {}; reinstall "
          "torchx, or point TORCHX_BACKEND_PATH at this build's back-ends",
          scheduler, file_, TORCHX_BUILD_ID, fmt::join(other_builds, "; ")));
    }
    return FailedPreconditionError(
        fmt::format("scheduler {}: its back-end module {} was not found (looked in: {}); set TORCHX_BACKEND_PATH to "
                    "the directory holding it",
                    scheduler, file_, fmt::join(looked, ", ")));
  }

  std::string file_;
  std::mutex mu_;
  std::optional<Result<std::vector<schedulers::SchedulerEntry>>> entries_;
};

}  // namespace

std::vector<std::string> BackendModulePath() {
  std::vector<std::string> path;
  auto add = [&path](const fs::path& p) {
    std::string s = p.lexically_normal().string();
    if (std::find(path.begin(), path.end(), s) == path.end()) path.push_back(std::move(s));
  };
  if (const char* env = std::getenv("TORCHX_BACKEND_PATH"); env && *env) {
    std::string_view p(env);
    while (!p.empty()) {
      size_t colon = p.find(':');
      if (colon != 0) add(fs::path(std::string(p.substr(0, colon))));
      if (colon == std::string_view::npos) break;
      p.remove_prefix(colon + 1);
    }
  }
  // This install's modules: in the package beside the Python extension (torchx/backends), which
  // is also where a wheel's CLI in <prefix>/bin finds them (PackageDirs), and beside a CLI in its
  // build tree. Never beside the interpreter (see FindSelfImage: a venv's python is the base
  // install's binary).
  for (const fs::path& dir : internal::PackageDirs()) add(dir / "backends");
  add(fs::path(TORCHX_BACKEND_BUILD_DIR));
  return path;
}

void AddLoadableBackend(PluginRegistry& registry, const BuiltinBackend& backend) {
  auto loader = std::make_shared<ModuleLoader>(backend.module);
  for (const std::string& name : backend.schedulers) {
    (void)registry.AddScheduler(
        name, "builtin",
        [loader, name](const schedulers::SchedulerContext& context) -> Result<std::unique_ptr<schedulers::Scheduler>> {
          TORCHX_ASSIGN_OR_RETURN(schedulers::SchedulerFactory factory, loader->Factory(name));
          return factory(context);
        });
  }
}

}  // namespace torchx::plugins
