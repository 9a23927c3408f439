#include "plugins/native_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "torchx/plugins/fractionals.h"
#include "torchx/specs/serialize.h"

namespace torchx::plugins {
namespace {

namespace fs = std::filesystem;

// What init() registers goes through these callbacks with this context.
struct HostContext {
  PluginRegistry* registry;
  std::string source;
  std::string init_error;
};

Result<specs::Resource> ResourceFrom(const TorchxNamedResource& r, double fraction) {
  TorchxResource out{};
  out.struct_size = sizeof(TorchxResource);
  if (r.make(r.user, fraction, &out) != 0) {
    return InvalidArgumentError(
        fmt::format("named resource {}: the plugin could not make it (fraction {})", r.name, fraction));
  }
  if (out.struct_size < TORCHX_RESOURCE_V1_SIZE) {
    return InvalidArgumentError(fmt::format("named resource {}: TorchxResource struct_size {} < {}", r.name,
                                            out.struct_size, TORCHX_RESOURCE_V1_SIZE));
  }
  // Through the core's resource reader, so malformed capabilities/devices name the field.
  nlohmann::json j = {{"cpu", out.cpu}, {"gpu", out.gpu}, {"memMB", out.mem_mb}};
  for (auto [key, text] : {std::pair{"capabilities", out.capabilities_json}, std::pair{"devices", out.devices_json}}) {
    if (!text) continue;
    j[key] = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j[key].is_discarded()) {
      return InvalidArgumentError(fmt::format("named resource {}: {}: not valid JSON: {}", r.name, key, text));
    }
  }
  auto res = specs::ResourceFromJson(j.dump());
  if (!res) return res.error().WithContext(fmt::format("named resource {}", r.name));
  return res;
}

int AddNamedResource(void* ctx, const TorchxNamedResource* r) {
  auto* host = static_cast<HostContext*>(ctx);
  if (!r || r->struct_size < TORCHX_NAMED_RESOURCE_V1_SIZE || !r->name || !r->make) {
    host->registry->AddError({host->source, "struct_size",
                              fmt::format("TorchxNamedResource: struct_size {} < {} or missing name/make",
                                          r ? r->struct_size : 0, TORCHX_NAMED_RESOURCE_V1_SIZE)});
    return 1;
  }
  const TorchxNamedResource desc = *r;  // the plugin's descriptor is static; keep a copy anyway
  auto factory_for = [desc](double fraction) -> NamedResourceFactory {
    return [desc, fraction] { return ResourceFrom(desc, fraction); };
  };
  int rc = 0;
  auto add = [&](const std::string& name, double fraction) {
    if (!host->registry->AddNamedResource(name, host->source, factory_for(fraction)).ok()) rc = 1;
  };
  FractionalsRequest request;
  if (desc.fractional_policy == TORCHX_FRACTIONALS_LIST) {
    request.policy = FractionalsRequest::Policy::kList;
    for (size_t i = 0; i < desc.num_fractionals; ++i) {
      request.list.push_back({desc.fractionals[i].fraction, desc.fractionals[i].suffix});
    }
  } else if (desc.fractional_policy == TORCHX_FRACTIONALS_POWERS_OF_TWO_GPUS) {
    request.policy = FractionalsRequest::Policy::kPowersOfTwoGpus;
  } else {
    request.policy = FractionalsRequest::Policy::kHalveMemDownTo;
    request.min_gib = desc.min_gib;
  }
  std::vector<std::string> aliases;
  for (const char* const* a = desc.aliases; a && *a; ++a) aliases.emplace_back(*a);
  NamedResourceVariants variants =
      ExpandNamedResource(desc.name, aliases, request, [&desc] { return ResourceFrom(desc, 1.0); });
  for (const NamedFraction& v : variants.names) add(v.name, v.fraction);
  if (!variants.fractionals_error.ok()) {
    host->registry->AddError({host->source, "init", variants.fractionals_error.message()});
    return 1;
  }
  return rc;
}

int AddComponent(void* ctx, const TorchxComponent* c) {
  auto* host = static_cast<HostContext*>(ctx);
  if (!c || c->struct_size < TORCHX_COMPONENT_V1_SIZE || !c->spec_json || !c->build || !c->free_string) {
    host->registry->AddError({host->source, "struct_size", "TorchxComponent: too small or missing fields"});
    return 1;
  }
  Status error;
  auto component = MakeNativeComponent(*c, host->source, &error);
  if (!component) {
    host->registry->AddError({host->source, "init", error.message()});
    return 1;
  }
  return host->registry->AddComponent(host->source, std::move(component)).ok() ? 0 : 1;
}

int AddScheduler(void* ctx, const TorchxScheduler* s) {
  auto* host = static_cast<HostContext*>(ctx);
  if (!s || s->struct_size < TORCHX_SCHEDULER_V1_SIZE || !s->name || !s->create || !s->dryrun || !s->schedule ||
      !s->describe || !s->cancel || !s->free_string) {
    host->registry->AddError({host->source, "struct_size", "TorchxScheduler: too small or missing functions"});
    return 1;
  }
  return host->registry->AddScheduler(s->name, host->source, MakeNativeSchedulerFactory(*s)).ok() ? 0 : 1;
}

int AddDevice(void* ctx, const TorchxDevice* d) {
  auto* host = static_cast<HostContext*>(ctx);
  if (!d || d->struct_size < TORCHX_DEVICE_V1_SIZE || !d->name) {
    host->registry->AddError({host->source, "struct_size", "TorchxDevice: too small or missing name"});
    return 1;
  }
  DevicePlugin dev;
  dev.name = d->name;
  dev.library_path = d->library_path ? d->library_path : "";
  dev.chip_count = d->chip_count;
  auto read_map = [](const char* text, std::map<std::string, std::string>& out) {
    if (!text) return;
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) return;
    for (auto& [k, v] : j.items()) out[k] = v.is_string() ? v.get<std::string>() : v.dump();
  };
  read_map(d->env_template_json, dev.env_template);
  read_map(d->create_options_json, dev.create_options);
  return host->registry->AddDevice(host->source, std::move(dev)).ok() ? 0 : 1;
}

int AddTracker(void* ctx, const TorchxTracker* t) {
  auto* host = static_cast<HostContext*>(ctx);
  if (!t || t->struct_size < TORCHX_TRACKER_V1_SIZE || !t->name) {
    host->registry->AddError({host->source, "struct_size", "TorchxTracker: too small or missing name"});
    return 1;
  }
  return host->registry->AddTracker(t->name, host->source, t->config_json ? t->config_json : "").ok() ? 0 : 1;
}

void SetError(void* ctx, const char* message) { static_cast<HostContext*>(ctx)->init_error = message ? message : ""; }

void LoadOne(const std::string& path, PluginRegistry& registry, std::vector<NativeLibrary>& loaded) {
  std::string source = "native:" + path;
  for (const NativeLibrary& l : loaded) {
    if (l.path == path) return;
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    registry.AddError({path, "dlopen", err ? err : "dlopen failed"});
    return;
  }
  auto entry = reinterpret_cast<TorchxPluginEntryFn>(dlsym(handle, TORCHX_PLUGIN_ENTRY));
  if (!entry) {
    registry.AddError(
        {path, "missing_symbol",
         fmt::format("no `{}` symbol: not a torchx plugin (export it with extern \"C\")", TORCHX_PLUGIN_ENTRY)});
    dlclose(handle);
    return;
  }
  const TorchxPluginInfo* info = entry();
  if (!info || info->struct_size < TORCHX_PLUGIN_INFO_V1_SIZE) {
    registry.AddError({path, "struct_size",
                       fmt::format("TorchxPluginInfo struct_size {} is smaller than version 1's {}",
                                   info ? info->struct_size : 0, TORCHX_PLUGIN_INFO_V1_SIZE)});
    return;  // not closed: the entry ran, the library may hold state
  }
  if (info->abi_version != TORCHX_PLUGIN_ABI_VERSION) {
    registry.AddError({path, "abi_version",
                       fmt::format("built for plugin ABI version {}, this torchx speaks version {}", info->abi_version,
                                   TORCHX_PLUGIN_ABI_VERSION)});
    return;
  }
  loaded.push_back({path, handle});
  if (!info->init) {
    registry.AddError({path, "init", "no init function"});
    return;
  }
  HostContext ctx{&registry, source, ""};
  TorchxPluginHost host{};
  host.struct_size = sizeof(TorchxPluginHost);
  host.abi_version = TORCHX_PLUGIN_ABI_VERSION;
  host.ctx = &ctx;
  host.add_named_resource = &AddNamedResource;
  host.add_component = &AddComponent;
  host.add_scheduler = &AddScheduler;
  host.add_device = &AddDevice;
  host.add_tracker = &AddTracker;
  host.set_error = &SetError;
  int rc = info->init(&host);
  if (rc != 0) {
    registry.AddError({path, "init",
                       fmt::format("plugin {} init returned {}{}", info->name ? info->name : "?", rc,
                                   ctx.init_error.empty() ? "" : ": " + ctx.init_error)});
  }
}

}  // namespace

std::vector<std::string> DefaultNativePath() {
  std::vector<std::string> path;
  if (const char* env = std::getenv("TORCHX_PLUGIN_PATH"); env && *env) {
    std::string p(env);
    size_t start = 0;
    while (start <= p.size()) {
      size_t colon = p.find(':', start);
      if (colon == std::string::npos) colon = p.size();
      if (colon > start) path.push_back(p.substr(start, colon - start));
      start = colon + 1;
    }
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) path.push_back((exe.parent_path() / ".." / "lib" / "torchx_plugins").lexically_normal().string());
  Dl_info dl{};
  if (dladdr(reinterpret_cast<void*>(&DefaultNativePath), &dl) && dl.dli_fname) {
    fs::path lib = fs::path(dl.dli_fname).parent_path() / "torchx_plugins";
    if (std::find(path.begin(), path.end(), lib.string()) == path.end()) path.push_back(lib.string());
  }
  return path;
}

void LoadNativePlugins(const std::vector<std::string>& path, PluginRegistry& registry,
                       std::vector<NativeLibrary>& loaded) {
  for (const std::string& entry : path) {
    std::error_code ec;
    if (fs::is_regular_file(entry, ec)) {
      LoadOne(entry, registry, loaded);
      continue;
    }
    if (!fs::is_directory(entry, ec)) continue;
    std::vector<std::string> libs;
    for (const auto& f : fs::directory_iterator(entry, ec)) {
      if (f.path().extension() == ".so") libs.push_back(f.path().string());
    }
    std::sort(libs.begin(), libs.end());
    for (const std::string& lib : libs) LoadOne(lib, registry, loaded);
  }
}

}  // namespace torchx::plugins
