// torchx.plugins' core side: the registry report and info, the fractional helpers, and the
// provider through which Python plugins (torchx_plugins.*, entry points) join the core's registry.
#include <pybind11/stl.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bindings.h"
#include "errors.h"
#include "py_scheduler.h"
#include "torchx/plugins/fractionals.h"
#include "torchx/plugins/registry.h"
#include "torchx/specs/serialize.h"

namespace torchx::python {
namespace py = pybind11;

namespace {

using plugins::PluginRegistry;
using plugins::PluginType;

using specs::ResourceFromJson;

// Runs `fn` with the GIL, turning a Python exception into a Status.
template <typename Fn>
auto WithGil(std::string_view what, Fn fn) -> Result<decltype(fn())> {
  py::gil_scoped_acquire gil;
  try {
    return fn();
  } catch (py::error_already_set& e) {
    return InvalidArgumentError(fmt::format("{}: {}", what, e.what()));
  }
}

void AddPythonEntries(PluginRegistry& registry, PluginType type, const py::object& provider) {
  if (type != PluginType::kScheduler && type != PluginType::kNamedResource && type != PluginType::kTracker) return;
  py::gil_scoped_acquire gil;
  py::dict provided;
  try {
    provided = provider(std::string(plugins::PluginTypeName(type)));
  } catch (py::error_already_set& e) {
    registry.AddError({"python", "python", e.what()});
    return;
  }
  for (auto err : provided["errors"]) {
    auto t = err.cast<py::tuple>();
    registry.AddError({t[0].cast<std::string>(), t[1].cast<std::string>(), t[2].cast<std::string>()});
  }
  for (auto entry : provided["entries"]) {
    auto t = entry.cast<py::tuple>();
    std::string name = t[0].cast<std::string>(), source = t[1].cast<std::string>();
    // Held for the process lifetime, like the registry itself (never destroyed at exit).
    auto* factory = new py::object(t[2]);
    if (type == PluginType::kNamedResource) {
      (void)registry.AddNamedResource(name, source, [factory, name]() -> Result<specs::Resource> {
        auto json = WithGil(fmt::format("named resource {}", name), [&] {
          py::object to_json = py::module_::import("torchx.specs.api").attr("resource_to_json");
          return py::module_::import("json").attr("dumps")(to_json((*factory)())).cast<std::string>();
        });
        if (!json) return json.status();
        return ResourceFromJson(*json);
      });
    } else if (type == PluginType::kScheduler) {
      py::object make = py::module_::import("torchx.plugins._scheduler_adapter").attr("adapter_maker")(name, *factory);
      (void)registry.AddScheduler(name, source, PyObjectSchedulerFactory(name, std::move(make)));
    } else {
      (void)registry.AddTracker(name, source, "");
    }
  }
}

template <typename Fn>
auto Released(Fn fn) {
  py::gil_scoped_release release;
  return fn();
}

}  // namespace

void BindPlugins(py::module_& m, PluginRegistry& registry) {
  m.def("plugins_report", [&registry] { return Released([&] { return registry.Report(); }); });
  m.def("plugins_report_json", [&registry] { return Released([&] { return registry.ReportJson(); }); });
  m.def("plugins_info", [&registry](const std::string& type) {
    PluginType t = ValueOrThrow(plugins::ParsePluginType(type));
    auto info = Released([&] { return registry.Info(t); });
    py::list out;
    for (const auto& p : info) out.append(py::make_tuple(p.name, p.source));
    return out;
  });
  // The schedulers in registration order with where each came from and whether it runs composite
  // jobs: read from the registry, constructing none (get_scheduler_factories).
  m.def("scheduler_entries", [&registry] {
    auto info = Released([&] { return registry.Info(plugins::PluginType::kScheduler); });
    py::list out;
    for (const auto& p : info) out.append(py::make_tuple(p.name, p.source, p.composite));
    return out;
  });
  m.def("plugins_errors", [&registry] {
    auto errors = Released([&] { return registry.Errors(); });
    py::list out;
    for (const auto& e : errors) out.append(py::make_tuple(e.source, e.kind, e.message));
    return out;
  });
  m.def(
      "fractionals",
      [](const std::string& request, const std::string& resource) {
        auto req = ValueOrThrow(plugins::FractionalsRequestFromJson(request));
        std::vector<std::pair<double, std::string>> out;
        auto whole = [&] { return ResourceFromJson(resource); };
        for (const auto& f : ValueOrThrow(plugins::ComputeFractionals(req, whole))) {
          out.emplace_back(f.fraction, f.suffix);
        }
        return out;
      },
      "A fractionals request (register.powers_of_two_gpus, ...) applied to a whole resource: [(fraction, suffix)].");
  m.def(
      "named_resource_variants",
      [](const std::string& name, const std::vector<std::string>& aliases, const std::string& request,
         std::optional<std::string> whole) {
        // A malformed request still registers the name and aliases, like a failing rule.
        auto req = plugins::FractionalsRequestFromJson(request);
        auto variants = plugins::ExpandNamedResource(
            name, aliases, req ? *req : plugins::FractionalsRequest{}, [&]() -> Result<specs::Resource> {
              if (!whole) return InvalidArgumentError("the whole resource (fraction 1.0) was not given");
              return ResourceFromJson(*whole);
            });
        Status error =
            req ? variants.fractionals_error : req.error().WithContext(fmt::format("named resource {}", name));
        std::vector<std::pair<std::string, double>> names;
        for (const auto& v : variants.names) names.emplace_back(v.name, v.fraction);
        return py::make_tuple(names, error.ok() ? py::object(py::none()) : py::object(py::str(error.message())));
      },
      py::arg("name"), py::arg("aliases"), py::arg("request"), py::arg("whole") = std::nullopt,
      "The names a named resource registers and the fraction of each, as the core names them, and the "
      "error (or None) that kept its fractionals out.");
  m.def("forget_python_plugins", [&registry] {
    Released([&] { registry.ForgetProvider("python", {"python", "entrypoint:"}); });
  });
  m.def("set_python_provider", [&registry](py::object provider) {
    auto* held = new py::object(std::move(provider));  // lives as long as the registry
    // Python runs already: its discovery is asked before a built-in scheduler's name is answered,
    // so that a plugin of that name wins (TorchX #1448).
    registry.AddProvider(
        "python", [held](PluginType t, PluginRegistry& r) { AddPythonEntries(r, t, *held); },
        [](PluginType t, std::string_view) { return t == PluginType::kScheduler; });
  });
}

}  // namespace torchx::python
