// The plugin registry: the one place schedulers, trackers, named resources, components and
// devices are registered and found, from the built-ins (RegisterBuiltins), native plugins (shared
// libraries, plugins/plugin_abi.h) and providers the host adds (the CLI's Python bridge; the
// Python package's torchx_plugins.* and entry points).
//
// There is no process-wide instance: the composition root (the CLI's main, the Python module)
// builds one and hands it to the Runner, which is the only thing that resolves names in it.
//
// Each plugin type is discovered on its first access and cached: native libraries are loaded once
// (they may register several types), then each provider is asked for that type. A lookup of a
// name already registered (a built-in) discovers nothing. Lookups never fail for "nothing found":
// they return nullopt / nullptr / an empty list. A plugin that fails to load is recorded with the
// reason (dlopen, missing symbol, ABI version, struct size, init, duplicate, ...) and never stops
// the others. Info() and the report return copies.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "torchx/components/component.h"
#include "torchx/devices/device.h"
#include "torchx/schedulers/scheduler.h"
#include "torchx/specs/app_def.h"
#include "torchx/status.h"

namespace torchx::plugins {

enum class PluginType { kScheduler, kTracker, kNamedResource, kComponent, kDevice };
inline constexpr PluginType kAllPluginTypes[] = {PluginType::kScheduler, PluginType::kTracker,
                                                 PluginType::kNamedResource, PluginType::kComponent,
                                                 PluginType::kDevice};

/// "scheduler", "tracker", "named_resource", "component", "device".
std::string_view PluginTypeName(PluginType t);
/// TorchX's group names: "torchx.schedulers", "torchx.tracker", "torchx.named_resources", and
/// this project's "torchx.components", "torchx.devices".
std::string_view PluginTypeGroup(PluginType t);
/// Accepts a name or a group; the error lists the choices.
Result<PluginType> ParsePluginType(std::string_view s);

/// One plugin as the report shows it.
struct PluginInfo {
  PluginType type = PluginType::kScheduler;
  std::string name;
  std::string source;  ///< "builtin", "native:<path>", "python:<module>", "entrypoint:<dist>"
  /// A scheduler of composite jobs (AddCompositeScheduler): known without building it, so that
  /// listing what an AppDef can be submitted to constructs no plugin (TorchX constructs none).
  bool composite = false;
};

/// A plugin (or a plugin library) that could not be loaded.
struct PluginError {
  std::string source;  ///< the library path or module
  std::string kind;    ///< dlopen | missing_symbol | abi_version | struct_size | init | duplicate | python
  std::string message;
};

using devices::DevicePlugin;
using NamedResourceFactory = std::function<Result<specs::Resource>()>;
using TrackerDescription = std::string;  ///< free-form (trackers run in Python)

class PluginRegistry {
 public:
  struct Options {
    /// Directories (or library files) searched for native plugins, in order. Default
    /// (nullopt): $TORCHX_PLUGIN_PATH (':'-separated), then <executable dir>/../lib/torchx_plugins
    /// and the directory `torchx_plugins` beside the library holding this code.
    std::optional<std::vector<std::string>> native_path;
  };

  PluginRegistry();
  explicit PluginRegistry(Options options);
  ~PluginRegistry();
  PluginRegistry(const PluginRegistry&) = delete;
  PluginRegistry& operator=(const PluginRegistry&) = delete;

  // ---- registration (built-ins, native loader, providers) ----
  // kAlreadyExists for a name already registered for that type (the first one stays; the
  // duplicate is also recorded as an error of kind "duplicate"). A scheduler plugin (any source
  // but "builtin") named as a built-in replaces it (TorchX #1448: a plugin wins a name clash).
  Status AddScheduler(std::string name, std::string source, schedulers::SchedulerFactory factory);
  /// As AddScheduler, for a scheduler of composite jobs (Capability::kComposite: pipelines,
  /// sweeps, managed jobs), marked as one in Info.
  Status AddCompositeScheduler(std::string name, std::string source, schedulers::SchedulerFactory factory);
  Status AddNamedResource(std::string name, std::string source, NamedResourceFactory factory);
  Status AddComponent(std::string source, std::shared_ptr<const components::Component> component);
  Status AddDevice(std::string source, DevicePlugin device);
  Status AddTracker(std::string name, std::string source, TrackerDescription description);
  void AddError(PluginError error);

  /// A discovery step run once per type, on first access (after native plugins are loaded).
  using Provider = std::function<void(PluginType, PluginRegistry&)>;
  /// Whether a provider may register `name` of a type (an empty name: any), answered cheaply
  /// (without the provider's discovery): asked before a built-in scheduler's name, or the default
  /// scheduler, is answered without discovery, so that a plugin of that name wins and plugins come
  /// first. Null: the provider never shadows a built-in.
  using MayProvide = std::function<bool(PluginType, std::string_view)>;
  void AddProvider(std::string name, Provider provider, MayProvide may_provide = nullptr);
  /// Drops what the provider `name` added (the entries and errors whose source starts with one
  /// of `source_prefixes`) and asks it again on each type's next access: Python's
  /// `registry().clear()` after sys.path or the installed plugins changed.
  void ForgetProvider(std::string_view name, const std::vector<std::string>& source_prefixes);

  // ---- lookups (discover the type on first use) ----
  std::optional<schedulers::SchedulerFactory> Scheduler(std::string_view name);
  /// The composite kinds' schedulers (AddCompositeScheduler), in registration order, without
  /// discovery: only composition roots register them, never a provider.
  std::vector<std::string> CompositeSchedulers();
  /// The scheduler a run without `-s` goes to: the first plugin scheduler when there is one
  /// (TorchX #1448's merged order: plugins first), else DefaultSchedulerName(). Starts no
  /// discovery unless a provider may have a scheduler.
  std::string DefaultScheduler();
  std::optional<Result<specs::Resource>> NamedResource(std::string_view name);
  std::shared_ptr<const components::Component> Component(std::string_view name);
  std::optional<DevicePlugin> Device(std::string_view name);
  /// Names of one type: sorted, except schedulers: plugins first, then the built-ins, each in
  /// registration order (the default first).
  std::vector<std::string> Names(PluginType type);

  /// The registry as the lower layers' lookup interfaces (components, spec files and back-ends
  /// are handed these, never the registry). Valid as long as the registry.
  const specs::NamedResourceSource& named_resources() const;
  const devices::DeviceSource& devices() const;
  const components::ComponentSource& components() const;

  /// Copies: every type (discovering all), or one.
  std::vector<PluginInfo> Info();
  std::vector<PluginInfo> Info(PluginType type);
  std::vector<PluginError> Errors();

  /// What was found, from where, what failed and why, and the time each discovery took (every
  /// type is discovered first). Text for `print(registry())` / `torchx plugins`, or JSON.
  std::string Report();
  std::string ReportJson();

 private:
  struct Impl;
  class Views;
  void Discover(PluginType type);
  /// Loads the native plugins once (Discover's first step; also before a built-in scheduler's name
  /// is answered when their search path holds any, without asking the providers).
  void LoadNatives();
  template <typename Fn>
  std::invoke_result_t<Fn, Impl&> Lookup(PluginType type, Fn find);
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<Views> views_;
};

/// Registers the built-in schedulers (the back-ends of this build, linked in or loadable), named
/// resources, components and the CUDA device (source "builtin").
void RegisterBuiltins(PluginRegistry& registry);

/// One back-end of this build: linked in (`linked` set), or a loadable module (schedulers/
/// backend_module.h) named by its file and the schedulers it answers for.
struct BuiltinBackend {
  std::vector<schedulers::SchedulerEntry> (*linked)() = nullptr;
  std::string module;
  std::vector<std::string> schedulers;
};

/// The back-ends of this build, in the order the build lists them (the first one's first
/// scheduler is the default). Generated by CMake (plugins/builtin_backends.cc.in).
std::vector<BuiltinBackend> BuiltinBackends();

/// The scheduler a run without `-s` goes to (TorchX's: local_cwd): the first scheduler of the
/// first back-end the build lists, so no layer above names it.
std::string DefaultSchedulerName();

/// Where loadable back-end modules are searched, in order: $TORCHX_BACKEND_PATH (':'-separated),
/// `backends` beside the image holding this code (the Python extension, or the CLI), for the CLI
/// also <its dir>/../lib/torchx/backends, then the build tree. Never beside the interpreter: a
/// venv's python is the base install's binary. The first module of this build is loaded; one of
/// another build is passed over.
std::vector<std::string> BackendModulePath();

/// For the CLI: Python plugins through a `python -m torchx.plugins._bridge` child, started the
/// first time a scheduler, named resource or tracker type is discovered.
void AddPythonBridgeProvider(PluginRegistry& registry);

}  // namespace torchx::plugins
