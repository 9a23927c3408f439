// The plugin registry: schedulers, trackers, named resources, components and devices, from the
// built-ins (registered explicitly), native plugins (shared libraries, plugins/plugin_abi.h) and
// providers the host adds (the Python package adds torchx_plugins.* and entry points).
//
// Each plugin type is discovered on its first access and cached: native libraries are loaded once
// (they may register several types), then each provider is asked for that type. Lookups never
// fail for "nothing found": they return an empty map. A plugin that fails to load is recorded
// with the reason (dlopen, missing symbol, ABI version, struct size, init, duplicate, ...) and
// never stops the others. Info() and the report return copies.
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
#include <vector>

#include "torchx/components/component.h"
#include "torchx/plugins/device.h"
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
};

/// A plugin (or a plugin library) that could not be loaded.
struct PluginError {
  std::string source;  ///< the library path or module
  std::string kind;    ///< dlopen | missing_symbol | abi_version | struct_size | init | duplicate | python
  std::string message;
};

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

  /// The process-wide registry (built-ins registered), which the Runner and the CLI use.
  static PluginRegistry& Global();

  // ---- registration (built-ins, native loader, providers) ----
  // kAlreadyExists for a name already registered for that type (the first one stays; the
  // duplicate is also recorded as an error of kind "duplicate").
  Status AddScheduler(std::string name, std::string source, schedulers::SchedulerFactory factory);
  Status AddNamedResource(std::string name, std::string source, NamedResourceFactory factory);
  Status AddComponent(std::string source, std::shared_ptr<components::Component> component);
  Status AddDevice(std::string source, DevicePlugin device);
  Status AddTracker(std::string name, std::string source, TrackerDescription description);
  void AddError(PluginError error);

  /// A discovery step run once per type, on first access (after native plugins are loaded).
  using Provider = std::function<void(PluginType, PluginRegistry&)>;
  void AddProvider(std::string name, Provider provider);

  // ---- lookups (discover the type on first use) ----
  std::optional<schedulers::SchedulerFactory> Scheduler(std::string_view name);
  std::optional<Result<specs::Resource>> NamedResource(std::string_view name);
  std::shared_ptr<const components::Component> Component(std::string_view name);
  std::optional<DevicePlugin> Device(std::string_view name);
  /// Sorted names of one type.
  std::vector<std::string> Names(PluginType type);

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
  void Discover(PluginType type);
  std::unique_ptr<Impl> impl_;
};

/// Registers the built-in schedulers, named resources and components (source "builtin").
void RegisterBuiltins(PluginRegistry& registry);

/// Makes specs::GetNamedResource fall back to the global registry's named resources.
void InstallNamedResourceSource();
/// Makes `dist.ddp -j ...xauto` count the chips of the device $PJRT_DEVICE selects.
void InstallDeviceChipSource();

/// For the CLI: Python plugins through a `python -m torchx.plugins._bridge` child, started the
/// first time a scheduler, named resource or tracker type is discovered.
void AddPythonBridgeProvider(PluginRegistry& registry);

}  // namespace torchx::plugins
