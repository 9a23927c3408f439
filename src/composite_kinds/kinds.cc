#include "torchx/composite_kinds.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include "core/strings.h"
#include "torchx/composite/kind_module.h"
#include "torchx/managed/managed.h"
#include "torchx/pipelines/pipeline.h"
#include "torchx/sweeps/sweep.h"

namespace torchx {
namespace {

using composite::KindEntry;

// The kinds linked in. Their names are the ones their drivers are started with (StartDriver).
const std::vector<KindEntry>& LinkedKinds() {
  static const std::vector<KindEntry> kKinds = {
      {"pipeline", &pipelines::RegisterPipelineScheduler, &pipelines::RunPipelineDriver, &pipelines::PlanLaunch},
      {"sweep", &sweeps::RegisterSweepScheduler, &sweeps::RunSweepDriver, &sweeps::PlanLaunch},
      {"managed", &managed::RegisterManagedScheduler, &managed::RunManagedDriver, &managed::PlanLaunch},
  };
  return kKinds;
}

struct LoadedKinds {
  std::vector<KindEntry> kinds;
  std::vector<plugins::PluginError> errors;
};

// The modules $TORCHX_COMPOSITE_KINDS names, loaded once per process and kept open (their code
// runs the kinds' schedulers and drivers until the process ends).
LoadedKinds LoadModules() {
  LoadedKinds out;
  const char* env = std::getenv(TORCHX_COMPOSITE_KINDS_ENV);
  if (!env) return out;
  // Absolute, and exported so: a driver runs in its composite's cwd, not the launcher's, and must
  // load the same files. (Read once, at the composition root, before any thread starts.)
  std::vector<std::string> paths;
  for (const std::string& given : internal::SplitAny(env, ":")) {
    std::error_code ec;
    std::string path = given.empty() ? given : std::filesystem::absolute(given, ec).lexically_normal().string();
    if (!path.empty() && std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
  }
  ::setenv(TORCHX_COMPOSITE_KINDS_ENV, fmt::format("{}", fmt::join(paths, ":")).c_str(), 1);
  for (const std::string& path : paths) {
    std::string source = "native:" + path;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      out.errors.push_back({source, "dlopen", why ? why : "cannot be loaded"});
      continue;
    }
    using Entry = const composite::KindModule* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, TORCHX_COMPOSITE_KIND_SYMBOL));
    if (!entry) {
      out.errors.push_back({source, "missing_symbol", fmt::format("no {} in it", TORCHX_COMPOSITE_KIND_SYMBOL)});
      dlclose(handle);
      continue;
    }
    const composite::KindModule* module = entry();
    if (std::string_view(module->build_id) != TORCHX_BUILD_ID) {
      out.errors.push_back(
          {source, "abi_version",
           fmt::format("built by {}, this is {}: rebuild it with this build", module->build_id, TORCHX_BUILD_ID)});
      dlclose(handle);
      continue;
    }
    bool taken = false;
    for (const KindEntry& k : LinkedKinds()) taken = taken || std::string_view(k.name) == module->kind.name;
    for (const KindEntry& k : out.kinds) taken = taken || std::string_view(k.name) == module->kind.name;
    if (taken) {
      out.errors.push_back(
          {source, "duplicate", fmt::format("composite kind `{}` is already there", module->kind.name)});
      continue;
    }
    out.kinds.push_back(module->kind);
  }
  return out;
}

const LoadedKinds& Modules() {
  static const LoadedKinds kLoaded = LoadModules();
  return kLoaded;
}

// The modules' kinds a registry refused: a scheduler of that name was there first (a built-in, a
// plugin), so the kind's handles would reach that scheduler, not the kind. Such a kind is neither
// planned nor driven, as if its module had not loaded.
struct Refusals {
  std::mutex mu;
  std::vector<std::string> names;  ///< the kinds refused, in the order found
};

Refusals& Refused() {
  static Refusals refused;
  return refused;
}

bool IsRefused(std::string_view name) {
  Refusals& r = Refused();
  std::lock_guard lock(r.mu);
  return std::find(r.names.begin(), r.names.end(), name) != r.names.end();
}

std::vector<KindEntry> AllKinds() {
  std::vector<KindEntry> all = LinkedKinds();
  for (const KindEntry& k : Modules().kinds) {
    if (!IsRefused(k.name)) all.push_back(k);
  }
  return all;
}

// What is said beside "unknown kind": the kinds there are, and why a module was not loaded.
std::string KindsThereAre() {
  std::string out = fmt::format("the kinds are: {}", fmt::join(CompositeKindNames(), ", "));
  for (const plugins::PluginError& e : Modules().errors) out += fmt::format("; {} not loaded: {}", e.source, e.message);
  Refusals& r = Refused();
  std::lock_guard lock(r.mu);
  for (const std::string& name : r.names) {
    out += fmt::format("; a module's kind `{}` is not used: a scheduler of that name was there first", name);
  }
  return out;
}

const KindEntry* FindKind(std::string_view name) {
  for (const KindEntry& k : LinkedKinds()) {
    if (name == k.name) return &k;
  }
  for (const KindEntry& k : Modules().kinds) {
    if (name == k.name) return IsRefused(name) ? nullptr : &k;
  }
  return nullptr;
}

}  // namespace

void RegisterCompositeKinds(plugins::PluginRegistry& registry) {
  for (const KindEntry& k : AllKinds()) k.register_scheduler(registry);
  for (const plugins::PluginError& e : Modules().errors) registry.AddError(e);
  // A module's kind the registry did not take as a composite scheduler lost its name to another.
  std::vector<std::string> taken = registry.CompositeSchedulers();
  for (const KindEntry& k : Modules().kinds) {
    if (std::find(taken.begin(), taken.end(), k.name) != taken.end() || IsRefused(k.name)) continue;
    Refusals& r = Refused();
    std::lock_guard lock(r.mu);
    r.names.emplace_back(k.name);  // the registry's own duplicate error says which scheduler kept it
  }
}

namespace {

// Said when a kind's name reaches another scheduler: a plugin found after the kinds were
// registered (discovery runs on first lookup) took it, and the kind's handles would go there.
std::string NameTaken(std::string_view kind) {
  return fmt::format("composite kind `{}`: its name is another scheduler's now (a plugin's); rename one of them", kind);
}

}  // namespace

int RunCompositeDriver(plugins::PluginRegistry& registry, std::string_view kind, const std::string& state_dir,
                       const std::string& id, int ready_fd) {
  const KindEntry* k = FindKind(kind);
  if (!k) {
    std::fprintf(stderr, "torchx composite driver: unknown kind `%.*s` (%s)\n", static_cast<int>(kind.size()),
                 kind.data(), KindsThereAre().c_str());
    return 2;
  }
  (void)registry.Scheduler(kind);  // discovers the plugins that may hold the name
  std::vector<std::string> composite = registry.CompositeSchedulers();
  if (std::find(composite.begin(), composite.end(), kind) == composite.end()) {
    std::fprintf(stderr, "torchx composite driver: %s\n", NameTaken(kind).c_str());
    return 2;
  }
  return k->run_driver(registry, state_dir, id, ready_fd);
}

Result<composite::PlannedComposite> PlanComposite(runner::Runner& runner, const config::TorchxConfig& config,
                                                  const composite::LaunchRequest& request) {
  const KindEntry* k = FindKind(request.kind);
  if (!k) {
    return InvalidArgumentError(fmt::format("composite kind `{}`: unknown; {}", request.kind, KindsThereAre()));
  }
  auto capabilities = runner.SchedulerCapabilities(request.kind);
  if (!capabilities || !capabilities->Has(schedulers::Capability::kComposite)) {
    return InvalidArgumentError(NameTaken(request.kind));
  }
  return k->plan(runner, config, request);
}

std::vector<std::string> CompositeKindNames() {
  std::vector<std::string> names;
  for (const KindEntry& k : AllKinds()) names.emplace_back(k.name);
  return names;
}

}  // namespace torchx
