// Header-only C++ helper for writing torchx native plugins (plugin_abi.h underneath).
//
//   #include <torchx/plugins/plugin_helper.h>
//
//   TORCHX_PLUGIN("my_plugin", "1.0") {
//     plugin.NamedResource("my_gpu", [](double f) { return torchx::plugin::Resource{8, 8 * f, ...}; })
//           .PowersOfTwoGpus();
//     plugin.Component(R"({"name": "my.hello", ...})", [](const std::string& args) { return app_json; });
//     plugin.Scheduler<MyScheduler>("my_sched", runopts_json);
//   }
//
// Needs only the C++ standard library: the plugin does not link against torchx. Exceptions thrown
// by callbacks are caught at the ABI boundary and reported as errors. Everything registered lives
// until the process exits (plugins are never unloaded).
#pragma once

#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "torchx/plugins/plugin_abi.h"

namespace torchx::plugin {

struct Resource {
  int cpu = 0;
  int gpu = 0;
  int mem_mb = 0;
  std::string capabilities_json = "{}";
  std::string devices_json = "{}";
};

/// A scheduler: JSON in, JSON out (the forms of plugin_abi.h). Throw to report an error.
class SchedulerImpl {
 public:
  virtual ~SchedulerImpl() = default;
  /// {"app", "cfg", "app_id", "session_name"} -> {"request": printable, "payload": string}
  virtual std::string DryRun(const std::string& request_json) = 0;
  /// payload -> app_id
  virtual std::string Schedule(const std::string& payload) = 0;
  /// app_id -> AppStatus JSON, or "null" when unknown
  virtual std::string Describe(const std::string& app_id) = 0;
  virtual void Cancel(const std::string& app_id) = 0;
  /// -> [{"app_id", "state", "name"}]
  virtual std::string List() { return "[]"; }
  /// {"app_id", "role", "k"} -> log text
  virtual std::string Logs(const std::string& request_json) = 0;
};

namespace detail {

inline char* Dup(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}
inline void Free(char* s) { std::free(s); }

template <typename Fn>
char* Guard(char** error, Fn fn) {
  try {
    return Dup(fn());
  } catch (const std::exception& e) {
    *error = Dup(e.what());
  } catch (...) {
    *error = Dup("unknown error");
  }
  return nullptr;
}

}  // namespace detail

class NamedResourceBuilder;

class Plugin {
 public:
  using MakeResource = std::function<Resource(double fraction)>;
  using BuildComponent = std::function<std::string(const std::string& args_json)>;

  /// Registers `name` (and, with the builder's methods, aliases and fractional variants).
  NamedResourceBuilder NamedResource(std::string name, MakeResource make);

  /// `spec_json` is a ComponentSpec JSON; `build` returns AppDef JSON (throw to fail).
  Plugin& Component(std::string spec_json, BuildComponent build) {
    auto& c = components_.emplace_back();
    c.spec = std::move(spec_json);
    c.build = std::move(build);
    return *this;
  }

  /// T: a SchedulerImpl constructible from (session_name).
  template <typename T>
  Plugin& Scheduler(std::string name, std::string runopts_json = "[]") {
    auto& s = schedulers_.emplace_back();
    s.name = std::move(name);
    s.runopts = std::move(runopts_json);
    s.create = [](const std::string& session) -> SchedulerImpl* { return new T(session); };
    return *this;
  }

  /// A device kind; `env_template_json` values may hold {rank}, {count}, {chips}.
  Plugin& Device(std::string name, std::string library_path, int chip_count, std::string env_template_json = "{}",
                 std::string create_options_json = "{}") {
    devices_.push_back({std::move(name), std::move(library_path), chip_count, std::move(env_template_json),
                        std::move(create_options_json)});
    return *this;
  }

  Plugin& Tracker(std::string name, std::string config_json = "{}") {
    trackers_.push_back({std::move(name), std::move(config_json)});
    return *this;
  }

  /// Hands everything to the host; returns 0 when all of it was accepted.
  int RegisterWith(const TorchxPluginHost* host);

 private:
  friend class NamedResourceBuilder;
  struct NamedRes {
    std::string name;
    MakeResource make;
    std::vector<std::string> aliases;
    std::vector<const char*> alias_ptrs;
    std::vector<std::pair<double, std::string>> fractionals;
    std::vector<TorchxFractional> c_fractionals;
    int policy = TORCHX_FRACTIONALS_LIST;
    int min_gib = 0;
    TorchxNamedResource desc{};
    Resource last;  // keeps the strings handed out by make() alive until the next call
  };
  struct Comp {
    std::string spec;
    BuildComponent build;
    TorchxComponent desc{};
  };
  struct Sched {
    std::string name;
    std::string runopts;
    SchedulerImpl* (*create)(const std::string&) = nullptr;
    TorchxScheduler desc{};
  };
  struct Dev {
    std::string name, library_path;
    int chips;
    std::string env, options;
    TorchxDevice desc{};
  };
  struct Track {
    std::string name, config;
    TorchxTracker desc{};
  };
  // deques: registered descriptors point into these, so elements must not move.
  std::deque<NamedRes> named_;
  std::deque<Comp> components_;
  std::deque<Sched> schedulers_;
  std::deque<Dev> devices_;
  std::deque<Track> trackers_;
};

class NamedResourceBuilder {
 public:
  NamedResourceBuilder(Plugin* plugin, size_t index) : plugin_(plugin), index_(index) {}
  NamedResourceBuilder& Alias(std::string alias) {
    Get().aliases.push_back(std::move(alias));
    return *this;
  }
  /// Explicit variants: registered as <name>_<suffix>, made with make(fraction).
  NamedResourceBuilder& Fractional(double fraction, std::string suffix) {
    Get().fractionals.emplace_back(fraction, std::move(suffix));
    return *this;
  }
  /// TorchX's register.powers_of_two_gpus, computed by the host from make(1.0).
  NamedResourceBuilder& PowersOfTwoGpus() {
    Get().policy = TORCHX_FRACTIONALS_POWERS_OF_TWO_GPUS;
    return *this;
  }
  /// TorchX's register.halve_mem_down_to(minGiB=...), computed by the host from make(1.0).
  NamedResourceBuilder& HalveMemDownTo(int min_gib) {
    Get().policy = TORCHX_FRACTIONALS_HALVE_MEM;
    Get().min_gib = min_gib;
    return *this;
  }

 private:
  Plugin::NamedRes& Get() { return plugin_->named_[index_]; }
  Plugin* plugin_;
  size_t index_;
};

inline NamedResourceBuilder Plugin::NamedResource(std::string name, MakeResource make) {
  auto& r = named_.emplace_back();
  r.name = std::move(name);
  r.make = std::move(make);
  return NamedResourceBuilder(this, named_.size() - 1);
}

inline int Plugin::RegisterWith(const TorchxPluginHost* host) {
  if (!host || host->struct_size < TORCHX_PLUGIN_HOST_V1_SIZE) return 1;
  int rc = 0;
  for (NamedRes& r : named_) {
    for (const std::string& a : r.aliases) r.alias_ptrs.push_back(a.c_str());
    r.alias_ptrs.push_back(nullptr);
    for (const auto& [f, s] : r.fractionals) r.c_fractionals.push_back({f, s.c_str()});
    r.desc.struct_size = sizeof(TorchxNamedResource);
    r.desc.name = r.name.c_str();
    r.desc.user = &r;
    r.desc.make = [](void* user, double fraction, TorchxResource* out) -> int {
      auto* self = static_cast<NamedRes*>(user);
      try {
        self->last = self->make(fraction);
      } catch (...) {
        return 1;
      }
      out->cpu = self->last.cpu;
      out->gpu = self->last.gpu;
      out->mem_mb = self->last.mem_mb;
      out->capabilities_json = self->last.capabilities_json.c_str();
      out->devices_json = self->last.devices_json.c_str();
      return 0;
    };
    r.desc.aliases = r.alias_ptrs.data();
    r.desc.fractionals = r.c_fractionals.data();
    r.desc.num_fractionals = r.c_fractionals.size();
    r.desc.fractional_policy = r.policy;
    r.desc.min_gib = r.min_gib;
    rc |= host->add_named_resource(host->ctx, &r.desc);
  }
  for (Comp& c : components_) {
    c.desc.struct_size = sizeof(TorchxComponent);
    c.desc.spec_json = c.spec.c_str();
    c.desc.user = &c;
    c.desc.build = [](void* user, const char* args, char** error) -> char* {
      auto* self = static_cast<Comp*>(user);
      return detail::Guard(error, [&] { return self->build(args); });
    };
    c.desc.free_string = &detail::Free;
    rc |= host->add_component(host->ctx, &c.desc);
  }
  for (Sched& s : schedulers_) {
    s.desc.struct_size = sizeof(TorchxScheduler);
    s.desc.name = s.name.c_str();
    s.desc.runopts_json = s.runopts.c_str();
    s.desc.user = &s;
    s.desc.create = [](void* user, const char* session) -> void* {
      try {
        return static_cast<Sched*>(user)->create(session);
      } catch (...) {
        return nullptr;
      }
    };
    s.desc.destroy = [](void* self) { delete static_cast<SchedulerImpl*>(self); };
    s.desc.dryrun = [](void* self, const char* req, char** e) {
      return detail::Guard(e, [&] { return static_cast<SchedulerImpl*>(self)->DryRun(req); });
    };
    s.desc.schedule = [](void* self, const char* payload, char** e) {
      return detail::Guard(e, [&] { return static_cast<SchedulerImpl*>(self)->Schedule(payload); });
    };
    s.desc.describe = [](void* self, const char* id, char** e) {
      return detail::Guard(e, [&] { return static_cast<SchedulerImpl*>(self)->Describe(id); });
    };
    s.desc.cancel = [](void* self, const char* id, char** e) {
      return detail::Guard(e, [&] {
        static_cast<SchedulerImpl*>(self)->Cancel(id);
        return std::string("ok");
      });
    };
    s.desc.list = [](void* self, char** e) {
      return detail::Guard(e, [&] { return static_cast<SchedulerImpl*>(self)->List(); });
    };
    s.desc.logs = [](void* self, const char* req, char** e) {
      return detail::Guard(e, [&] { return static_cast<SchedulerImpl*>(self)->Logs(req); });
    };
    s.desc.free_string = &detail::Free;
    rc |= host->add_scheduler(host->ctx, &s.desc);
  }
  for (Dev& d : devices_) {
    d.desc = {
        sizeof(TorchxDevice), d.name.c_str(),   d.library_path.empty() ? nullptr : d.library_path.c_str(), d.chips,
        d.env.c_str(),        d.options.c_str()};
    rc |= host->add_device(host->ctx, &d.desc);
  }
  for (Track& t : trackers_) {
    t.desc = {sizeof(TorchxTracker), t.name.c_str(), t.config.c_str()};
    rc |= host->add_tracker(host->ctx, &t.desc);
  }
  return rc;
}

}  // namespace torchx::plugin

/// Defines the plugin's entry point; the body fills `plugin` (a torchx::plugin::Plugin&).
#define TORCHX_PLUGIN(NAME, VERSION)                                                                          \
  static void torchx_plugin_define(::torchx::plugin::Plugin& plugin);                                         \
  static int torchx_plugin_init(const TorchxPluginHost* host) {                                               \
    static ::torchx::plugin::Plugin* plugin = new ::torchx::plugin::Plugin();                                 \
    try {                                                                                                     \
      torchx_plugin_define(*plugin);                                                                          \
    } catch (const std::exception& e) {                                                                       \
      if (host && host->set_error) host->set_error(host->ctx, e.what());                                      \
      return 1;                                                                                               \
    }                                                                                                         \
    return plugin->RegisterWith(host);                                                                        \
  }                                                                                                           \
  extern "C" __attribute__((visibility("default"))) const TorchxPluginInfo* torchx_plugin_v1() {              \
    static const TorchxPluginInfo info = {sizeof(TorchxPluginInfo), TORCHX_PLUGIN_ABI_VERSION, NAME, VERSION, \
                                          &torchx_plugin_init};                                               \
    return &info;                                                                                             \
  }                                                                                                           \
  static void torchx_plugin_define(::torchx::plugin::Plugin& plugin)
