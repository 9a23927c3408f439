#include "torchx/plugins/registry.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/spelling.h"
#include "plugins/native_loader.h"
#include "torchx/specs/named_resources.h"

namespace torchx::plugins {

namespace {
// What RegisterBuiltins and the composite kinds register under; every other source is a plugin.
constexpr std::string_view kBuiltinSource = "builtin";
}  // namespace

std::string_view PluginTypeName(PluginType t) {
  switch (t) {
    case PluginType::kScheduler:
      return "scheduler";
    case PluginType::kTracker:
      return "tracker";
    case PluginType::kNamedResource:
      return "named_resource";
    case PluginType::kComponent:
      return "component";
    case PluginType::kDevice:
      return "device";
  }
  return "scheduler";
}

std::string_view PluginTypeGroup(PluginType t) {
  switch (t) {
    case PluginType::kScheduler:
      return "torchx.schedulers";
    case PluginType::kTracker:
      return "torchx.tracker";
    case PluginType::kNamedResource:
      return "torchx.named_resources";
    case PluginType::kComponent:
      return "torchx.components";
    case PluginType::kDevice:
      return "torchx.devices";
  }
  return "torchx.schedulers";
}

Result<PluginType> ParsePluginType(std::string_view s) {
  std::vector<std::string> names;
  for (PluginType t : kAllPluginTypes) {
    if (s == PluginTypeName(t) || s == PluginTypeGroup(t)) return t;
    names.emplace_back(PluginTypeName(t));
  }
  return InvalidArgumentError(fmt::format("plugin type: `{}` is not one of [{}]", s, fmt::join(names, ", ")));
}

struct PluginRegistry::Impl {
  Options options;
  std::recursive_mutex mu;  // providers call Add* while Discover holds the lock
  std::map<std::string, std::pair<std::string, schedulers::SchedulerFactory>> schedulers;
  std::map<std::string, std::pair<std::string, NamedResourceFactory>> named_resources;
  std::map<std::string, std::pair<std::string, std::shared_ptr<const components::Component>>> components;
  std::vector<std::string> scheduler_order;  // registration order: built-ins first, the default first
  std::vector<std::string> builtin_order;    // the built-ins alone, in that order (shadowed or not)
  // Built-ins a plugin replaced, kept so that forgetting the plugin (Python's registry().clear())
  // brings them back.
  std::map<std::string, std::pair<std::string, schedulers::SchedulerFactory>> shadowed_builtins;
  std::set<std::string> shadowed_composites;
  std::set<std::string> composite_schedulers;
  std::map<std::string, DevicePlugin> devices;
  std::map<std::string, std::pair<std::string, TrackerDescription>> trackers;
  std::vector<PluginError> errors;
  struct ProviderEntry {
    std::string name;
    Provider provider;
    MayProvide may_provide;
    std::set<PluginType> asked;  // types this provider has already answered
  };
  // Whether a provider not yet asked for `type` says it may register `name` (empty: any).
  bool Unasked(PluginType type, std::string_view name) {
    return std::any_of(providers.begin(), providers.end(), [&](const ProviderEntry& p) {
      return p.may_provide && !p.asked.contains(type) && p.may_provide(type, name);
    });
  }
  bool NativePathHoldsAny() {
    if (!native_path_holds_any) {
      std::vector<std::string> path = options.native_path ? *options.native_path : DefaultNativePath();
      native_path_holds_any = std::any_of(path.begin(), path.end(), [](const std::string& p) {
        std::error_code ec;
        if (std::filesystem::is_regular_file(p, ec)) return true;
        return std::filesystem::is_directory(p, ec) && !std::filesystem::is_empty(p, ec);
      });
    }
    return *native_path_holds_any;
  }
  std::optional<bool> native_path_holds_any;
  std::vector<ProviderEntry> providers;
  std::set<PluginType> discovered;
  bool natives_loaded = false;
  std::map<std::string, double> seconds;  // "native" and each type name
  std::vector<NativeLibrary> libraries;   // kept loaded for the process lifetime
};

// The registry seen through the lower layers' lookup interfaces. The lookups discover lazily,
// which mutates the registry; the views hold it by reference for that.
class PluginRegistry::Views {
 public:
  explicit Views(PluginRegistry& r) : resources_(r), devices_(r), components_(r) {}

  class Resources : public specs::NamedResourceSource {
   public:
    explicit Resources(PluginRegistry& r) : r_(r) {}
    std::optional<Result<specs::Resource>> Find(std::string_view name) const override { return r_.NamedResource(name); }
    std::vector<std::string> Names() const override { return r_.Names(PluginType::kNamedResource); }

   private:
    PluginRegistry& r_;
  };
  class Devices : public devices::DeviceSource {
   public:
    explicit Devices(PluginRegistry& r) : r_(r) {}
    std::optional<DevicePlugin> Find(const std::string& name) const override { return r_.Device(name); }
    std::vector<std::string> Names() const override { return r_.Names(PluginType::kDevice); }

   private:
    PluginRegistry& r_;
  };
  class Components : public components::ComponentSource {
   public:
    explicit Components(PluginRegistry& r) : r_(r) {}
    std::shared_ptr<const components::Component> Find(std::string_view name) const override {
      return r_.Component(name);
    }
    std::vector<std::string> Names() const override { return r_.Names(PluginType::kComponent); }

   private:
    PluginRegistry& r_;
  };

  Resources resources_;
  Devices devices_;
  Components components_;
};

PluginRegistry::PluginRegistry() : PluginRegistry(Options{}) {}
PluginRegistry::PluginRegistry(Options options)
    : impl_(std::make_unique<Impl>()), views_(std::make_unique<Views>(*this)) {
  impl_->options = std::move(options);
}
PluginRegistry::~PluginRegistry() = default;

const specs::NamedResourceSource& PluginRegistry::named_resources() const { return views_->resources_; }
const devices::DeviceSource& PluginRegistry::devices() const { return views_->devices_; }
const components::ComponentSource& PluginRegistry::components() const { return views_->components_; }

namespace {

template <typename Map, typename Value>
Status AddUnique(Map& map, std::vector<PluginError>& errors, PluginType type, std::string name, std::string source,
                 Value value) {
  if (auto it = map.find(name); it != map.end()) {
    std::string msg = fmt::format("{} `{}` from {} is already registered by {}; the first one is kept",
                                  PluginTypeName(type), name, source, it->second.first);
    errors.push_back({source, "duplicate", msg});
    return AlreadyExistsError(msg);
  }
  map.emplace(std::move(name), std::make_pair(std::move(source), std::move(value)));
  return OkStatus();
}

}  // namespace

Status PluginRegistry::AddScheduler(std::string name, std::string source, schedulers::SchedulerFactory factory) {
  std::lock_guard lock(impl_->mu);
  if (auto it = impl_->schedulers.find(name);
      it != impl_->schedulers.end() && it->second.first == kBuiltinSource && source != kBuiltinSource) {
    // The plugin wins, listed among the plugins in its registration order.
    impl_->shadowed_builtins[name] = std::exchange(it->second, {std::move(source), std::move(factory)});
    if (impl_->composite_schedulers.erase(name) > 0) impl_->shadowed_composites.insert(name);
    std::erase(impl_->scheduler_order, name);
    impl_->scheduler_order.push_back(name);
    return OkStatus();
  }
  std::string key = name;
  bool builtin = source == kBuiltinSource;
  TORCHX_RETURN_IF_ERROR(AddUnique(impl_->schedulers, impl_->errors, PluginType::kScheduler, std::move(name),
                                   std::move(source), std::move(factory)));
  if (builtin) impl_->builtin_order.push_back(key);
  impl_->scheduler_order.push_back(std::move(key));
  return OkStatus();
}

Status PluginRegistry::AddCompositeScheduler(std::string name, std::string source,
                                             schedulers::SchedulerFactory factory) {
  std::lock_guard lock(impl_->mu);
  std::string key = name;
  TORCHX_RETURN_IF_ERROR(AddScheduler(std::move(name), std::move(source), std::move(factory)));
  impl_->composite_schedulers.insert(std::move(key));
  return OkStatus();
}

Status PluginRegistry::AddNamedResource(std::string name, std::string source, NamedResourceFactory factory) {
  std::lock_guard lock(impl_->mu);
  return AddUnique(impl_->named_resources, impl_->errors, PluginType::kNamedResource, std::move(name),
                   std::move(source), std::move(factory));
}

Status PluginRegistry::AddComponent(std::string source, std::shared_ptr<const components::Component> component) {
  std::lock_guard lock(impl_->mu);
  std::string name = component->spec().name;
  return AddUnique(impl_->components, impl_->errors, PluginType::kComponent, std::move(name), std::move(source),
                   std::move(component));
}

Status PluginRegistry::AddDevice(std::string source, DevicePlugin device) {
  std::lock_guard lock(impl_->mu);
  if (auto it = impl_->devices.find(device.name); it != impl_->devices.end()) {
    std::string msg = fmt::format("device `{}` from {} is already registered by {}; the first one is kept", device.name,
                                  source, it->second.source);
    impl_->errors.push_back({source, "duplicate", msg});
    return AlreadyExistsError(msg);
  }
  device.source = std::move(source);
  std::string name = device.name;
  impl_->devices.emplace(std::move(name), std::move(device));
  return OkStatus();
}

Status PluginRegistry::AddTracker(std::string name, std::string source, TrackerDescription description) {
  std::lock_guard lock(impl_->mu);
  return AddUnique(impl_->trackers, impl_->errors, PluginType::kTracker, std::move(name), std::move(source),
                   std::move(description));
}

void PluginRegistry::AddError(PluginError error) {
  std::lock_guard lock(impl_->mu);
  impl_->errors.push_back(std::move(error));
}

void PluginRegistry::AddProvider(std::string name, Provider provider, MayProvide may_provide) {
  std::lock_guard lock(impl_->mu);
  impl_->providers.push_back({std::move(name), std::move(provider), std::move(may_provide), {}});
  // Types discovered before this provider existed are asked of it on their next access.
  impl_->discovered.clear();
}

void PluginRegistry::ForgetProvider(std::string_view name, const std::vector<std::string>& source_prefixes) {
  std::lock_guard lock(impl_->mu);
  auto from = [&](const std::string& source) {
    return std::any_of(source_prefixes.begin(), source_prefixes.end(),
                       [&](const std::string& p) { return source.rfind(p, 0) == 0; });
  };
  auto drop = [&](auto& entries) { std::erase_if(entries, [&](const auto& e) { return from(e.second.first); }); };
  std::erase_if(impl_->scheduler_order, [&](const std::string& n) {
    auto it = impl_->schedulers.find(n);
    return it != impl_->schedulers.end() && from(it->second.first);
  });
  drop(impl_->schedulers);
  for (auto it = impl_->shadowed_builtins.begin(); it != impl_->shadowed_builtins.end();) {
    if (impl_->schedulers.contains(it->first)) {  // still shadowed, by another provider's plugin
      ++it;
      continue;
    }
    impl_->schedulers.emplace(it->first, std::move(it->second));
    impl_->scheduler_order.push_back(it->first);
    if (impl_->shadowed_composites.erase(it->first) > 0) impl_->composite_schedulers.insert(it->first);
    it = impl_->shadowed_builtins.erase(it);
  }
  drop(impl_->named_resources);
  drop(impl_->trackers);
  std::erase_if(impl_->errors, [&](const PluginError& e) { return from(e.source); });
  for (auto& p : impl_->providers) {
    if (p.name == name) p.asked.clear();
  }
  impl_->discovered.clear();
}

void PluginRegistry::LoadNatives() {
  std::lock_guard lock(impl_->mu);
  if (impl_->natives_loaded) return;
  impl_->natives_loaded = true;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> path = impl_->options.native_path ? *impl_->options.native_path : DefaultNativePath();
  LoadNativePlugins(path, *this, impl_->libraries);
  impl_->seconds["native"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void PluginRegistry::Discover(PluginType type) {
  std::lock_guard lock(impl_->mu);
  if (impl_->discovered.count(type)) return;
  impl_->discovered.insert(type);
  LoadNatives();
  auto t0 = std::chrono::steady_clock::now();
  // By index: a provider may add another. Each answers each type once.
  for (size_t i = 0; i < impl_->providers.size(); ++i) {
    if (!impl_->providers[i].asked.insert(type).second) continue;
    Provider provider = impl_->providers[i].provider;
    provider(type, *this);
  }
  impl_->seconds[std::string(PluginTypeName(type))] +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A name already registered (a built-in) is answered without discovery; others discover the type
// first. The lookup runs under the lock and copies what it returns.
template <typename Fn>
std::invoke_result_t<Fn, PluginRegistry::Impl&> PluginRegistry::Lookup(PluginType type, Fn find) {
  {
    std::lock_guard lock(impl_->mu);
    if (auto found = find(*impl_)) return found;
  }
  Discover(type);
  std::lock_guard lock(impl_->mu);
  return find(*impl_);
}

std::optional<schedulers::SchedulerFactory> PluginRegistry::Scheduler(std::string_view name) {
  bool shadowed = false;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->schedulers.find(std::string(name));
    bool builtin = it != impl_->schedulers.end() && it->second.first == kBuiltinSource;
    // Native plugins (cheap: no Python) load first when their path holds any; one of a built-in's
    // name replaces it as it registers. Then a provider that may have the name is asked.
    if (builtin && !impl_->natives_loaded && impl_->NativePathHoldsAny()) LoadNatives();
    it = impl_->schedulers.find(std::string(name));
    shadowed = it != impl_->schedulers.end() && it->second.first == kBuiltinSource &&
               impl_->Unasked(PluginType::kScheduler, name);
  }
  if (shadowed) Discover(PluginType::kScheduler);  // a plugin of a built-in's name replaces it
  return Lookup(PluginType::kScheduler, [&](Impl& impl) -> std::optional<schedulers::SchedulerFactory> {
    auto it = impl.schedulers.find(std::string(name));
    if (it == impl.schedulers.end()) return std::nullopt;
    return it->second.second;
  });
}

std::vector<std::string> PluginRegistry::CompositeSchedulers() {
  std::lock_guard lock(impl_->mu);
  std::vector<std::string> out;
  for (const std::string& name : impl_->scheduler_order) {
    if (impl_->composite_schedulers.contains(name)) out.push_back(name);
  }
  return out;
}

std::string PluginRegistry::DefaultScheduler() {
  bool ask = false;
  {
    std::lock_guard lock(impl_->mu);
    if (!impl_->natives_loaded && impl_->NativePathHoldsAny()) LoadNatives();
    ask = impl_->discovered.contains(PluginType::kScheduler) || impl_->Unasked(PluginType::kScheduler, "");
    if (!ask) {  // no provider to ask: the first native plugin scheduler, else the built-in default
      for (const std::string& name : impl_->scheduler_order) {
        if (impl_->schedulers.at(name).first != kBuiltinSource && !impl_->composite_schedulers.contains(name)) {
          return name;
        }
      }
      return DefaultSchedulerName();
    }
  }
  for (const PluginInfo& p : Info(PluginType::kScheduler)) {
    if (!p.composite) return p.name;  // a composite takes no app of its own
  }
  return DefaultSchedulerName();
}

std::optional<Result<specs::Resource>> PluginRegistry::NamedResource(std::string_view name) {
  auto factory = Lookup(PluginType::kNamedResource, [&](Impl& impl) -> std::optional<NamedResourceFactory> {
    auto it = impl.named_resources.find(std::string(name));
    if (it == impl.named_resources.end()) return std::nullopt;
    return it->second.second;
  });
  if (!factory) return std::nullopt;
  return (*factory)();  // outside the lock: a Python factory takes the GIL
}

std::shared_ptr<const components::Component> PluginRegistry::Component(std::string_view name) {
  return Lookup(PluginType::kComponent, [&](Impl& impl) -> std::shared_ptr<const components::Component> {
    auto it = impl.components.find(std::string(name));
    if (it == impl.components.end()) return nullptr;
    return it->second.second;
  });
}

std::optional<DevicePlugin> PluginRegistry::Device(std::string_view name) {
  return Lookup(PluginType::kDevice, [&](Impl& impl) -> std::optional<DevicePlugin> {
    auto it = impl.devices.find(std::string(name));
    if (it == impl.devices.end()) return std::nullopt;
    return it->second;
  });
}

std::vector<std::string> PluginRegistry::Names(PluginType type) {
  std::vector<std::string> names;
  for (const PluginInfo& p : Info(type)) names.push_back(p.name);
  return names;
}

std::vector<PluginInfo> PluginRegistry::Info(PluginType type) {
  Discover(type);
  std::lock_guard lock(impl_->mu);
  std::vector<PluginInfo> out;
  auto add = [&](const auto& map) {
    for (const auto& [name, entry] : map) out.push_back({type, name, entry.first});
  };
  switch (type) {
    case PluginType::kScheduler:
      // TorchX #1448's merged order: the plugins, then the built-ins they left (the default first).
      for (bool builtin : {false, true}) {
        for (const std::string& name : builtin ? impl_->builtin_order : impl_->scheduler_order) {
          auto it = impl_->schedulers.find(name);
          if (it == impl_->schedulers.end() || (it->second.first == kBuiltinSource) != builtin) continue;
          out.push_back({type, name, it->second.first, impl_->composite_schedulers.contains(name)});
        }
      }
      break;
    case PluginType::kTracker:
      add(impl_->trackers);
      break;
    case PluginType::kNamedResource:
      add(impl_->named_resources);
      break;
    case PluginType::kComponent:
      add(impl_->components);
      break;
    case PluginType::kDevice:
      for (const auto& [name, d] : impl_->devices) out.push_back({type, name, d.source});
      break;
  }
  return out;
}

std::vector<PluginInfo> PluginRegistry::Info() {
  std::vector<PluginInfo> out;
  for (PluginType t : kAllPluginTypes) {
    auto part = Info(t);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

std::vector<PluginError> PluginRegistry::Errors() {
  std::lock_guard lock(impl_->mu);
  return impl_->errors;
}

std::string PluginRegistry::Report() {
  auto all = Info();
  std::lock_guard lock(impl_->mu);
  std::string out = "torchx plugins\n";
  for (PluginType t : kAllPluginTypes) {
    std::vector<const PluginInfo*> group;
    for (const PluginInfo& p : all) {
      if (p.type == t) group.push_back(&p);
    }
    double secs =
        impl_->seconds.count(std::string(PluginTypeName(t))) ? impl_->seconds[std::string(PluginTypeName(t))] : 0;
    out += fmt::format("\n{} ({}): {} found in {:.1f} ms\n", PluginTypeGroup(t), PluginTypeName(t), group.size(),
                       secs * 1000);
    for (const PluginInfo* p : group) out += fmt::format("  {:<28} {}\n", p->name, p->source);
  }
  out += fmt::format("\nnative plugin search: {:.1f} ms\n", impl_->seconds["native"] * 1000);
  if (impl_->errors.empty()) {
    out += "errors: none\n";
  } else {
    out += fmt::format("errors: {}\n", impl_->errors.size());
    for (const PluginError& e : impl_->errors) out += fmt::format("  [{}] {}: {}\n", e.kind, e.source, e.message);
  }
  return out;
}

std::string PluginRegistry::ReportJson() {
  auto all = Info();
  std::lock_guard lock(impl_->mu);
  nlohmann::json j = {{"plugins", nlohmann::json::object()},
                      {"errors", nlohmann::json::array()},
                      {"seconds", nlohmann::json::object()}};
  for (PluginType t : kAllPluginTypes) j["plugins"][std::string(PluginTypeName(t))] = nlohmann::json::array();
  for (const PluginInfo& p : all) {
    j["plugins"][std::string(PluginTypeName(p.type))].push_back({{"name", p.name}, {"source", p.source}});
  }
  for (const PluginError& e : impl_->errors) {
    j["errors"].push_back({{"source", e.source}, {"kind", e.kind}, {"message", e.message}});
  }
  for (const auto& [k, v] : impl_->seconds) j["seconds"][k] = v;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace torchx::plugins
