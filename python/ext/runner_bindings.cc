// torchx.runner's core: a Runner object per Python Runner, and the builtin components. Calls that
// may block (submit, wait, status of a remote back-end, log reads) release the GIL.
#include <pybind11/stl.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bindings.h"
#include "components/builtins/dist.h"
#include "convert.h"
#include "errors.h"
#include "py_scheduler.h"
#include "torchx/components/component_json.h"
#include "torchx/composite_kinds.h"
#include "torchx/config/torchx_config.h"
#include "torchx/config/tracking.h"
#include "torchx/devices/device.h"
#include "torchx/runner/runner.h"
#include "torchx/schedulers/usage.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/serialize.h"
#include "torchx/sweeps/sweep.h"

namespace torchx::python {
namespace py = pybind11;

namespace {

using runner::Runner;
using schedulers::DryRunInfo;

std::optional<std::string> StatusJson(const std::optional<specs::AppStatus>& s) {
  if (!s) return std::nullopt;
  return specs::AppStatusToJson(*s);
}

// Python iterator over log lines; each next() reads with the GIL released.
class PyLogIterator {
 public:
  explicit PyLogIterator(std::unique_ptr<schedulers::LogIterator> it) : it_(std::move(it)) {}
  py::str Next() {
    Result<std::optional<std::string>> line = [&] {
      py::gil_scoped_release release;
      return it_->Next();
    }();
    std::optional<std::string> l = ValueOrThrow(std::move(line));
    if (!l) throw py::stop_iteration();
    // Replicas may print any bytes: undecodable ones become U+FFFD (as TorchX reads log files).
    PyObject* text = PyUnicode_DecodeUTF8(l->data(), static_cast<Py_ssize_t>(l->size()), "replace");
    if (text == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::str>(text);
  }

 private:
  std::unique_ptr<schedulers::LogIterator> it_;
};

runner::RunnerOptions MakeOptions(plugins::PluginRegistry& registry, const std::string& session_name,
                                  const py::object& component_defaults, const py::object& schedulers) {
  runner::RunnerOptions o;
  o.session_name = session_name;
  // The schedulers' .torchxconfig sections (slurm's status_interval), as the CLI's commands read
  // them; a config that does not parse is reported by the call that resolves a run's cfg.
  std::error_code ec;
  if (auto config = config::TorchxConfig::Load(std::filesystem::current_path(ec).string()); config.ok()) {
    o.scheduler_settings = config::SchedulerSettings(*config);
  }
  // TorchX's scheduler_factories: each name is a back-end of the registry (its name as a str) or a
  // callable making the SchedulerAdapter of a Python scheduler object.
  if (!schedulers.is_none()) {
    o.schedulers.emplace();
    for (auto [key, value] : schedulers.cast<py::dict>()) {
      std::string name = py::str(key);
      if (py::isinstance<py::str>(value)) {
        std::string backend = py::str(value);
        (*o.schedulers)[name] = [&registry, backend](const schedulers::SchedulerContext& context) {
          auto factory = registry.Scheduler(backend);
          if (!factory)
            return Result<std::unique_ptr<schedulers::Scheduler>>(
                NotFoundError(fmt::format("scheduler: unknown scheduler `{}`", backend)));
          return (*factory)(context);
        };
      } else {
        (*o.schedulers)[name] = PyObjectSchedulerFactory(name, py::reinterpret_borrow<py::object>(value));
      }
    }
  }
  if (!component_defaults.is_none()) {
    for (auto [name, values] : component_defaults.cast<py::dict>()) {
      components::ConfigDefaults d;
      for (auto [k, v] : values.cast<py::dict>()) d.emplace_back(py::str(k), py::str(v));
      o.component_defaults[py::str(name)] = std::move(d);
    }
  }
  return o;
}

specs::AppDef ComponentApp(Runner& r, const std::string& component, const py::object& args) {
  Result<specs::AppDef> app = [&]() -> Result<specs::AppDef> {
    if (py::isinstance<py::str>(args)) return r.ComponentAppDefFromJson(component, args.cast<std::string>());
    return r.ComponentAppDef(component,
                             args.is_none() ? std::vector<std::string>{} : args.cast<std::vector<std::string>>());
  }();
  return ValueOrThrow(std::move(app), ErrorSite::kComponent);
}

DryRunInfo DryRun(Runner& r, specs::AppDef app, const std::string& scheduler, const py::object& cfg,
                  const std::string& workspace = {}, const std::optional<specs::Tracking>& tracking = std::nullopt) {
  // Resolved here (once) so that a bad cfg raises InvalidRunConfigException, not a bare ValueError.
  specs::ResolvedCfg resolved = ValueOrThrow(r.ResolveCfg(scheduler, CfgFromPy(cfg)), ErrorSite::kRunConfig);
  auto info = [&] {
    py::gil_scoped_release release;
    if (tracking) return r.DryRun(std::move(app), scheduler, resolved, workspace, *tracking);
    return r.DryRun(std::move(app), scheduler, resolved, workspace);
  }();
  return ValueOrThrow(std::move(info));
}

std::string Schedule(Runner& r, const DryRunInfo& info) {
  Result<std::string> handle = [&] {
    py::gil_scoped_release release;
    return r.Schedule(info);
  }();
  return ValueOrThrow(std::move(handle));
}

}  // namespace

void BindComponents(py::module_& m, plugins::PluginRegistry& registry) {
  // Registered components (builtins and native plugins), resolved as the Runner resolves them.
  auto find = [&registry](const std::string& name) {
    return ValueOrThrow(components::FindComponent(registry.components(), name), ErrorSite::kComponent);
  };
  m.def("component_names", [&registry] { return registry.Names(plugins::PluginType::kComponent); });
  m.def("component_spec",
        [find](const std::string& name) { return components::ComponentSpecToJson(find(name)->spec()); });
  m.def("component_help", [find](const std::string& name) { return components::ComponentHelp(find(name)->spec()); });
  m.def(
      "build_component",
      [find, &registry](const std::string& name, const std::string& args_json) {
        auto c = find(name);
        auto args = ValueOrThrow(components::ComponentArgsFromJson(c->spec(), args_json), ErrorSite::kComponent);
        components::BuildContext context{&registry.named_resources(), &registry.devices()};
        auto app = [&] {
          py::gil_scoped_release release;  // a plugin named resource may call back into Python
          return components::BuildAppDef(*c, args, context);
        }();
        return specs::AppDefToJson(ValueOrThrow(std::move(app), ErrorSite::kComponent), -1);
      },
      "Builds a registered component from a JSON object of typed arguments; returns AppDef JSON.");
  m.def("default_image", &components::DefaultImage);
  // The device plugin's chip count (CUDA: the GPUs nvidia-smi lists): the one count the core and
  // Python's LocalScheduler share. 0 when the device is not registered or cannot tell.
  m.def("device_chip_count", [&registry](const std::string& name) {
    std::optional<devices::DevicePlugin> device = registry.devices().Find(name);
    if (!device) return 0;
    Result<int> n = [&] {
      py::gil_scoped_release release;
      return devices::DeviceChipCount(*device);
    }();
    return n ? *n : 0;
  });
  // dist.*'s structured arguments (torchx.components.structured_arg, dist.parse_nnodes).
  m.def("torch_debug_flags", [] { return components::internal::TorchDebugFlags(); });
  m.def("parse_nnodes", [](const std::string& j) {
    auto n = ValueOrThrow(components::internal::ParseNNodes(j));
    return py::make_tuple(n.min_nodes, n.max_nodes, n.nproc_per_node, n.nnodes);
  });
  m.def("parse_spmd_j", [&registry](const std::string& h, const std::string& j) {
    auto nj = [&] {
      py::gil_scoped_release release;  // a plugin named resource may call back into Python
      return components::internal::ParseSpmdJ(h, j, &registry.named_resources());
    }();
    return ValueOrThrow(std::move(nj));
  });
  m.def("parse_structured_name", [](const std::string& name, const std::string& m, const std::string& script) {
    auto n = ValueOrThrow(components::internal::ParseStructuredName(name, m, script));
    return py::make_tuple(n.experiment, n.run);
  });
  // Python component files: the core parses their arguments against the spec they describe.
  m.def("parse_component_args", [](const std::string& spec_json, const std::vector<std::string>& argv) {
    auto spec = ValueOrThrow(components::ComponentSpecFromJson(spec_json), ErrorSite::kComponent);
    return components::ComponentArgsToJson(
        ValueOrThrow(components::ParseComponentArgs(spec, argv), ErrorSite::kComponent));
  });
  m.def("component_args_from_json", [](const std::string& spec_json, const std::string& args_json) {
    auto spec = ValueOrThrow(components::ComponentSpecFromJson(spec_json), ErrorSite::kComponent);
    return components::ComponentArgsToJson(
        ValueOrThrow(components::ComponentArgsFromJson(spec, args_json), ErrorSite::kComponent));
  });
}

void BindRunner(py::module_& m, plugins::PluginRegistry& registry) {
  m.def(
      "configured_trackers",
      [](const std::vector<std::string>& files) {
        auto config = ValueOrThrow(config::TorchxConfig::LoadFiles(files));
        return config::ConfiguredTrackers(config);
      },
      "[(name, config or None)] of the trackers every job sets up, from the environment and these "
      ".torchxconfig files (config::ConfiguredTrackers: the CLI's rules).");
  py::class_<DryRunInfo>(m, "DryRunInfo")
      .def_readonly("scheduler", &DryRunInfo::scheduler)
      .def_readonly("app_id", &DryRunInfo::app_id)
      .def_readonly("request", &DryRunInfo::request)
      .def_readonly("payload", &DryRunInfo::payload)
      .def_property_readonly("app_json", [](const DryRunInfo& d) { return specs::AppDefToJson(d.app, -1); })
      .def_property_readonly("cfg", [](const DryRunInfo& d) { return CfgToPy(d.cfg); });

  py::class_<PyLogIterator>(m, "LogIterator")
      .def("__iter__", [](PyLogIterator& self) -> PyLogIterator& { return self; })
      .def("__next__", &PyLogIterator::Next);

  py::class_<Runner>(m, "Runner")
      .def(py::init([&registry](const std::string& session_name, const py::object& component_defaults,
                                const py::object& schedulers) {
             return std::make_unique<Runner>(registry,
                                             MakeOptions(registry, session_name, component_defaults, schedulers));
           }),
           py::arg("session_name") = "torchx", py::arg("component_defaults") = py::none(),
           py::arg("schedulers") = py::none(),
           "schedulers: None for the registry's, else {name: registry back-end name | callable(session) -> "
           "SchedulerAdapter}, in place of the registry's (TorchX's scheduler_factories).")
      .def_property_readonly("session_name", &Runner::session_name)
      .def("scheduler_backends", &Runner::SchedulerBackends)
      .def(
          "dryrun",
          [](Runner& r, const std::string& app_json, const std::string& scheduler, const py::object& cfg,
             const std::string& workspace, const std::string& parent_run_id,
             const std::optional<std::vector<std::pair<std::string, std::optional<std::string>>>>& trackers) {
            std::optional<specs::Tracking> tracking;
            if (trackers) tracking = specs::Tracking{config::ParentRunId(parent_run_id), *trackers};
            return DryRun(r, ValueOrThrow(specs::AppDefFromJson(app_json)), scheduler, cfg, workspace, tracking);
          },
          py::arg("app_json"), py::arg("scheduler"), py::arg("cfg"), py::arg("workspace") = "",
          py::arg("parent_run_id") = "", py::arg("trackers") = py::none(),
          "trackers: [(name, config)] for this launch, with parent_run_id ($TORCHX_PARENT_RUN_ID wins); None: "
          "none.")
      .def(
          "component_app",
          [](Runner& r, const std::string& component, const py::object& args) {
            return specs::AppDefToJson(ComponentApp(r, component, args), -1);
          },
          "AppDef JSON of a component; args: list of CLI strings, or a JSON object string.")
      .def(
          "dryrun_component",
          [](Runner& r, const std::string& component, const py::object& args, const std::string& scheduler,
             const py::object& cfg, const std::string& workspace) {
            return DryRun(r, ComponentApp(r, component, args), scheduler, cfg, workspace);
          },
          py::arg("component"), py::arg("args"), py::arg("scheduler"), py::arg("cfg"), py::arg("workspace") = "")
      .def("schedule", &Schedule)
      .def(
          "launch_composite",
          [](Runner& r, const std::string& kind, const std::string& document, const std::string& origin,
             const std::string& scheduler, const std::string& overrides_json, bool dryrun) {
            // torchx.pipelines.run, torchx.sweeps.run, Runner.run(managed=True): the kind's document
            // (and the keyword arguments over it) through the launch entry the CLI's verbs call; the
            // handle (or, dry, the plan) out.
            auto out = [&]() -> Result<std::string> {
              py::gil_scoped_release release;
              std::error_code ec;
              TORCHX_ASSIGN_OR_RETURN(auto config,
                                      config::TorchxConfig::Load(std::filesystem::current_path(ec).string()));
              composite::LaunchRequest request{kind, document, origin, scheduler, "", overrides_json};
              TORCHX_ASSIGN_OR_RETURN(composite::PlannedComposite plan, PlanComposite(r, config, request));
              if (dryrun) return plan.text;
              return plan.launch(r);
            }();
            return ValueOrThrow(std::move(out));
          },
          py::arg("kind"), py::arg("document"), py::arg("origin"), py::arg("scheduler") = "",
          py::arg("overrides_json") = "{}", py::arg("dryrun") = false)
      .def(
          "sweep_status",
          [](Runner& r, const std::string& handle) {
            // torchx.sweeps.status: `torchx sweep status --json`'s document.
            auto out = [&]() -> Result<std::string> {
              py::gil_scoped_release release;
              TORCHX_ASSIGN_OR_RETURN(auto view, sweeps::ViewSweep(r, handle));
              return sweeps::SweepViewToJson(view);
            }();
            return ValueOrThrow(std::move(out));
          },
          py::arg("handle"))
      .def(
          "backend_dryrun",
          [](Runner& r, const std::string& scheduler, const std::string& app_json, const py::object& cfg) {
            auto app = ValueOrThrow(specs::AppDefFromJson(app_json));
            specs::Cfg c = CfgFromPy(cfg);
            auto info = [&] {
              py::gil_scoped_release release;
              return r.BackendDryRun(scheduler, app, c);
            }();
            return ValueOrThrow(std::move(info), ErrorSite::kRunConfig);
          },
          py::arg("scheduler"), py::arg("app_json"), py::arg("cfg"))
      .def(
          "schedule_request",
          [](Runner& r, const std::string& scheduler, const std::string& app_json, const std::string& app_id,
             const std::string& payload, const std::string& request) {
            // A request a Python scheduler class built (and its caller may have edited) with the
            // core's planner: submitted to the core's back-end as if the core had dry-run it.
            DryRunInfo info;
            info.scheduler = scheduler;
            info.app = ValueOrThrow(specs::AppDefFromJson(app_json));
            info.app_id = app_id;
            info.payload = payload;
            info.request = request;
            return Schedule(r, info);
          },
          py::arg("scheduler"), py::arg("app_json"), py::arg("app_id"), py::arg("payload"), py::arg("request") = "")
      .def("status",
           [](Runner& r, const std::string& handle) {
             auto s = [&] {
               py::gil_scoped_release release;
               return r.Status(handle);
             }();
             return StatusJson(ValueOrThrow(std::move(s), ErrorSite::kAppHandle));
           })
      .def(
          "wait",
          [](Runner& r, const std::string& handle, double interval_s, std::optional<double> timeout_s) {
            auto interval = std::chrono::milliseconds(static_cast<std::int64_t>(interval_s * 1000));
            std::optional<std::chrono::milliseconds> timeout;
            if (timeout_s) timeout = std::chrono::milliseconds(static_cast<std::int64_t>(*timeout_s * 1000));
            auto s = [&] {
              py::gil_scoped_release release;
              return r.Wait(handle, interval, timeout);
            }();
            return StatusJson(ValueOrThrow(std::move(s), ErrorSite::kAppHandle));
          },
          py::arg("handle"), py::arg("interval_s") = 0.2, py::arg("timeout_s") = py::none())
      .def("cancel",
           [](Runner& r, const std::string& handle) {
             auto s = [&] {
               py::gil_scoped_release release;
               return r.Cancel(handle);
             }();
             ThrowIfError(s, ErrorSite::kAppHandle);
           })
      .def("delete",
           [](Runner& r, const std::string& handle) {
             auto s = [&] {
               py::gil_scoped_release release;
               return r.Delete(handle);
             }();
             ThrowIfError(s, ErrorSite::kAppHandle);
           })
      .def("describe",
           [](Runner& r, const std::string& handle) -> std::optional<std::string> {
             auto d = [&] {
               py::gil_scoped_release release;
               return r.Describe(handle);
             }();
             auto app = ValueOrThrow(std::move(d), ErrorSite::kAppHandle);
             if (!app) return std::nullopt;
             return specs::AppDefToJson(*app, -1);
           })
      .def(
          "describe_native",
          [](Runner& r, const std::string& handle) -> std::optional<DryRunInfo> {
            auto d = [&] {
              py::gil_scoped_release release;
              return r.DescribeNative(handle);
            }();
            // TorchX: None where the scheduler cannot read its request
            // back.
            if (!d && d.error().code() == StatusCode::kUnimplemented) return std::nullopt;
            return ValueOrThrow(std::move(d), ErrorSite::kAppHandle);
          },
          "The request as the engine holds it for a submitted app (Runner::DescribeNative); None for an unknown "
          "app or a scheduler that cannot say.")
      .def(
          "resource_usage",
          [](Runner& r, const std::string& handle, std::optional<double> since,
             size_t max_samples) -> std::optional<std::string> {
            schedulers::UsageOptions o;
            o.since = since;
            o.max_samples = max_samples;
            auto u = [&] {
              py::gil_scoped_release release;
              return r.ResourceUsage(handle, o);
            }();
            auto usage = ValueOrThrow(std::move(u), ErrorSite::kAppHandle);
            if (!usage) return std::nullopt;
            return schedulers::UsageToJson(*usage);
          },
          py::arg("handle"), py::arg("since") = std::nullopt, py::arg("max_samples") = 0,
          "The replicas' CPU, memory and GPU samples (Runner::ResourceUsage) as JSON; None for an unknown app.")
      .def(
          "log_lines",
          [](Runner& r, const std::string& handle, const std::string& role, int k, std::optional<std::string> regex,
             std::optional<double> since, std::optional<double> until, bool follow, const std::string& stream) {
            schedulers::LogOptions o;
            o.role = role;
            o.replica = k;
            o.regex = std::move(regex);
            o.since = since;
            o.until = until;
            o.follow = follow;
            o.stream = ValueOrThrow(schedulers::ParseLogStream(stream));
            // A bad handle is TorchX's MalformedAppHandleException; a bad option (regex) a ValueError.
            ValueOrThrow(specs::ParseAppHandle(handle), ErrorSite::kAppHandle);
            auto it = [&] {
              py::gil_scoped_release release;
              return r.LogLines(handle, o);
            }();
            return PyLogIterator(ValueOrThrow(std::move(it)));
          },
          py::arg("handle"), py::arg("role"), py::arg("k") = 0, py::arg("regex") = py::none(),
          py::arg("since") = py::none(), py::arg("until") = py::none(), py::arg("follow") = false,
          py::arg("stream") = "combined")
      .def("list",
           [](Runner& r, const std::string& scheduler) {
             auto l = [&] {
               py::gil_scoped_release release;
               return r.List(scheduler);
             }();
             py::list out;
             for (const auto& a : ValueOrThrow(std::move(l))) {
               out.append(py::make_tuple(a.app_id, static_cast<int>(a.state), a.app_handle, a.name));
             }
             return out;
           })
      .def("runopts", [](Runner& r, const std::string& scheduler) {
        return specs::RunOptsToJson(ValueOrThrow(r.SchedulerRunOpts(scheduler)));
      });
}

}  // namespace torchx::python
