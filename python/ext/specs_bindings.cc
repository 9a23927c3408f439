// torchx.specs functions backed by the core: AppDef validation, macros, app handles, named
// resources, mounts, status formatting, runopts.
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "bindings.h"
#include "convert.h"
#include "errors.h"
#include "specs/error_message.h"
#include "torchx/config/torchx_config.h"
#include "torchx/runner/runner.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/app_id.h"
#include "torchx/specs/app_state.h"
#include "torchx/specs/macros.h"
#include "torchx/specs/named_resources.h"
#include "torchx/specs/option_value.h"
#include "torchx/specs/overlays.h"
#include "torchx/specs/runopts.h"
#include "torchx/specs/serialize.h"

namespace torchx::python {
namespace py = pybind11;

namespace {

// A `-cfg` string's options; an unknown key is refused, as torchx-nightly's cfg_from_str.
Result<specs::Cfg> CfgFromStringRefusingUnknown(const specs::RunOpts& opts, const std::string& text) {
  std::vector<std::string> unknown;
  TORCHX_ASSIGN_OR_RETURN(specs::Cfg cfg, opts.CfgFromString(text, &unknown));
  if (unknown.empty()) return cfg;
  specs::Cfg given;  // as nightly shows it: every pair, as the strings given
  TORCHX_ASSIGN_OR_RETURN(auto pairs, specs::CfgStringToPairs(text));
  for (auto& [key, value] : pairs) given[key] = value;
  return opts.UnknownOptionError(unknown.front().substr(0, unknown.front().find('=')), given);
}

specs::AppDef AppFromJson(const std::string& json) { return ValueOrThrow(specs::AppDefFromJson(json)); }

// Through a Runner over the module's registry: built-in, native and Python plugin schedulers
// alike, as torchx.runner sees them.
specs::RunOpts SchedulerRunOpts(plugins::PluginRegistry& registry, const std::string& scheduler) {
  runner::Runner runner(registry);
  auto opts = [&] {
    py::gil_scoped_release release;  // creating a Python plugin scheduler takes the GIL itself
    return runner.SchedulerRunOpts(scheduler);
  }();
  return ValueOrThrow(std::move(opts));
}

}  // namespace

void BindSpecs(py::module_& m, plugins::PluginRegistry& registry) {
  m.def(
      "appdef_normalize", [](const std::string& json) { return specs::AppDefToJson(AppFromJson(json), -1); },
      "Reads an AppDef JSON (strictly typed) and writes it back in canonical form.");
  m.def(
      "appdef_validate", [](const std::string& json) { ThrowIfError(specs::ValidateAppDef(AppFromJson(json))); },
      "ValueError naming the field if the AppDef cannot be submitted.");
  m.def("appdef_to_yaml", [](const std::string& json) { return specs::AppDefToYaml(AppFromJson(json)); });
  m.def("appdef_from_yaml",
        [](const std::string& yaml) { return specs::AppDefToJson(ValueOrThrow(specs::AppDefFromYaml(yaml)), -1); });

  m.def(
      "macros_substitute",
      [](const std::string& text, const std::string& img_root, const std::string& app_id, const std::string& replica_id,
         const std::string& rank0_env) {
        specs::macros::Values v{img_root, app_id, replica_id, rank0_env};
        return v.Substitute(text);
      },
      py::arg("text"), py::arg("img_root"), py::arg("app_id"), py::arg("replica_id"), py::arg("rank0_env"));
  m.def(
      "macros_apply",
      [](const std::string& app_json, const std::string& img_root, const std::string& app_id,
         const std::string& replica_id, const std::string& rank0_env) {
        specs::AppDef app = AppFromJson(app_json);
        specs::macros::Values v{img_root, app_id, replica_id, rank0_env};
        for (specs::Role& r : app.roles) r = v.Apply(r);
        return specs::AppDefToJson(app, -1);
      },
      "Applies the macros to every role of an AppDef JSON.");

  m.def("make_app_handle", [](const std::string& scheduler, const std::string& session, const std::string& app_id) {
    return specs::MakeAppHandle(scheduler, session, app_id);
  });
  m.def("parse_app_handle", [](const std::string& handle) {
    auto p = ValueOrThrow(specs::ParseAppHandle(handle), ErrorSite::kAppHandle);
    return py::make_tuple(p.scheduler_backend, p.session_name, p.app_id);
  });
  m.def(
      "make_unique", [](const std::string& name, size_t n) { return specs::MakeUnique(name, n); }, py::arg("name"),
      py::arg("size") = 0);
  m.def(
      "encode_random_id", [](std::uint64_t v) { return specs::EncodeRandomId(v); },
      "TorchX's id alphabet encoding of a 64-bit value (ids.random_id).");
  m.def(
      "device_mounts",
      [](const std::map<std::string, int>& devices) {
        std::vector<std::string> unknown;
        std::vector<py::tuple> mounts;
        for (const auto& d : specs::DeviceMountsFor(devices, &unknown)) {
          mounts.push_back(py::make_tuple(d.src_path, d.dst_path, d.permissions));
        }
        return py::make_tuple(mounts, unknown);
      },
      "Resource.devices -> ([(src, dst, permissions)], [unknown names]).");
  m.def("normalize_name", [](const std::string& name) { return specs::NormalizeName(name); });

  m.def("named_resource", [&registry](const std::string& name) {
    // Without the GIL: an unknown name may run plugin discovery, which takes the registry's lock
    // and may call back into Python.
    auto res = [&] {
      py::gil_scoped_release release;
      return specs::GetNamedResource(name, &registry.named_resources());
    }();
    return specs::ResourceToJson(ValueOrThrow(std::move(res), ErrorSite::kNamedResource));
  });
  m.def(
      "builtin_named_resource",
      [](const std::string& name) {
        return specs::ResourceToJson(ValueOrThrow(specs::GetNamedResource(name, nullptr), ErrorSite::kNamedResource));
      },
      "A named resource of the core's own table (no plugins).");
  m.def("builtin_named_resource_names", [] { return specs::BuiltinNamedResourceNames(); });
  m.def("named_resource_names", [&registry] {
    py::gil_scoped_release release;
    return specs::NamedResourceNames(&registry.named_resources());
  });
  m.def("parse_mounts",
        [](const std::vector<std::string>& tokens) { return MountsToJson(ValueOrThrow(specs::ParseMounts(tokens))); });

  m.def("app_state_names", [] {
    py::list names;
    for (int i = 0; i <= static_cast<int>(specs::AppState::kUnknown); ++i) {
      names.append(std::string(specs::AppStateName(static_cast<specs::AppState>(i))));
    }
    return names;
  });
  m.def(
      "format_app_status",
      [](const std::string& status_json, const std::vector<std::string>& roles) {
        return specs::FormatAppStatus(ValueOrThrow(specs::AppStatusFromJson(status_json)), roles);
      },
      py::arg("status_json"), py::arg("filter_roles") = std::vector<std::string>{});

  m.def(
      "format_error_message",
      [](const std::string& msg, const std::string& header, size_t width) {
        return specs::internal::FormatErrorMessage(msg, header, width);
      },
      py::arg("msg"), py::arg("header"), py::arg("width") = 80);
  m.def(
      "runopts_resolve",
      [](const std::string& opts, const py::dict& cfg, bool ignore_unknown) {
        auto unknown = ignore_unknown ? specs::UnknownKeys::kPassThrough : specs::UnknownKeys::kRefuse;
        return CfgToPy(ValueOrThrow(ValueOrThrow(specs::RunOptsFromJson(opts)).Resolve(CfgFromPy(cfg), unknown),
                                    ErrorSite::kRunConfig)
                           .values());
      },
      py::arg("opts"), py::arg("cfg"), py::arg("ignore_unknown") = false);
  m.def("runopts_cfg_from_str", [](const std::string& opts, const std::string& text) {
    return CfgToPy(ValueOrThrow(CfgFromStringRefusingUnknown(ValueOrThrow(specs::RunOptsFromJson(opts)), text),
                                ErrorSite::kRunConfig));
  });
  m.def(
      "cfg_string_to_dict",
      [](const std::string& text) {
        py::dict out;
        for (auto& [k, v] : ValueOrThrow(specs::CfgStringToPairs(text))) out[py::str(k)] = py::str(v);
        return out;
      },
      "TorchX's to_dict(): `K=v1,v2,K2=v3` (quotes protect delimiters) -> {K: 'v1,v2', K2: 'v3'}.");
  m.def(
      "runopt_cast",
      [](const std::string& opt_json, const std::string& text) {
        specs::RunOpts opts = ValueOrThrow(specs::RunOptsFromJson(opt_json));
        const auto& [name, opt] = opts.options().at(0);
        return CfgValToPy(ValueOrThrow(
            specs::DecodeOptionValue(opt.type, text, specs::OptionSyntax::kCfgString, "cfg: option " + name)));
      },
      "runopt.cast_to_type: the value of a one-option runopts JSON's option from its -cfg text.");
  // Overlays cross as JSON text: Python's dicts in, the merged object out (torchx.specs.overlays
  // writes it back into the caller's dict).
  m.def(
      "overlay_apply",
      [](const std::string& base, const std::string& overlay, bool resolve) {
        auto b = nlohmann::ordered_json::parse(base);
        ThrowIfError(specs::overlays::Apply(b, nlohmann::ordered_json::parse(overlay), resolve));
        return b.dump();
      },
      py::arg("base"), py::arg("overlay"), py::arg("resolve") = true);
  m.def(
      "overlay_get",
      [](const std::string& ns_value, const std::string& kind, bool flat_fallback) {
        return specs::overlays::Get(nlohmann::ordered_json::parse(ns_value), kind, flat_fallback).dump();
      },
      py::arg("ns_value"), py::arg("kind"), py::arg("flat_fallback") = true);
  m.def("overlay_field_of", [](const std::string& key) { return specs::overlays::FieldOf(key); });
  m.def("overlay_validate",
        [](const std::string& overlay, const std::vector<std::string>& blocklist, const std::string& name) {
          ThrowIfError(specs::overlays::Validate(nlohmann::ordered_json::parse(overlay), blocklist, name));
        });
  // torchx.runner.config: the core's INI reader (the CLI's), and `torchx configure`'s writer.
  m.def(
      "config_parse",
      [](const std::string& text, const std::string& origin) {
        auto parsed = ValueOrThrow(config::TorchxConfig::Parse(text, origin));
        std::vector<py::tuple> out;
        for (const std::string& section : parsed.SectionNames()) {
          for (const config::ConfigEntry* e : parsed.Section(section)) {
            out.push_back(py::make_tuple(e->section, e->key, e->value));
          }
        }
        return out;
      },
      "A .torchxconfig text as (section, key, value) entries in file order.");
  m.def("config_dump", [](const std::vector<std::pair<std::string, std::string>>& schedulers, bool all_options) {
    std::vector<std::pair<std::string, specs::RunOpts>> opts;
    for (const auto& [name, json] : schedulers) opts.emplace_back(name, ValueOrThrow(specs::RunOptsFromJson(json)));
    return config::DumpConfig(opts, all_options);
  });
  m.def("snake_to_camel", [](const std::string& name) { return specs::SnakeToCamel(name); });
  m.def("camel_to_snake", [](const std::string& name) { return specs::CamelToSnake(name); });
  m.def("runopts_render", [](const std::string& opts) { return ValueOrThrow(specs::RunOptsFromJson(opts)).Render(); });

  m.def("scheduler_names", [&registry] {
    py::gil_scoped_release release;  // discovery may ask the Python provider
    return registry.Names(plugins::PluginType::kScheduler);
  });
  m.def("scheduler_runopts", [&registry](const std::string& scheduler) {
    return specs::RunOptsToJson(SchedulerRunOpts(registry, scheduler));
  });
  // What the scheduler can do (schedulers::Capability names): Python reads these, never back-end
  // names.
  m.def("scheduler_capabilities", [&registry](const std::string& scheduler) {
    runner::Runner runner(registry);
    auto caps = [&] {
      py::gil_scoped_release release;  // creating a Python plugin scheduler takes the GIL itself
      return runner.SchedulerCapabilities(scheduler);
    }();
    std::vector<std::string> names;
    for (schedulers::Capability c : ValueOrThrow(std::move(caps)).List())
      names.emplace_back(schedulers::CapabilityName(c));
    return names;
  });
  // A back-end's pure helper (Scheduler::Helper), for its TorchX Python class: JSON text in and
  // out. The only way this extension reaches a back-end's code.
  m.def("backend_helper",
        [&registry](const std::string& scheduler, const std::string& function, const std::string& args_json) {
          runner::Runner runner(registry);
          auto out = [&] {
            py::gil_scoped_release release;  // loading a back-end module, or a Python plugin scheduler
            return runner.SchedulerHelper(scheduler, function, args_json);
          }();
          return ValueOrThrow(std::move(out));
        });
  m.def("scheduler_runopts_repr",
        [&registry](const std::string& scheduler) { return SchedulerRunOpts(registry, scheduler).Render(); });
  m.def("scheduler_resolve_cfg", [&registry](const std::string& scheduler, const py::dict& cfg) {
    return CfgToPy(
        ValueOrThrow(SchedulerRunOpts(registry, scheduler).Resolve(CfgFromPy(cfg)), ErrorSite::kRunConfig).values());
  });
  m.def("scheduler_cfg_from_str", [&registry](const std::string& scheduler, const std::string& text) {
    return CfgToPy(
        ValueOrThrow(CfgFromStringRefusingUnknown(SchedulerRunOpts(registry, scheduler), text), ErrorSite::kRunConfig));
  });
}

}  // namespace torchx::python
