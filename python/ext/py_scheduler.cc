#include "py_scheduler.h"

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "errors.h"
#include "plugins/json_scheduler.h"
#include "torchx/specs/app_state.h"
#include "torchx/specs/serialize.h"

namespace torchx::python {
namespace py = pybind11;

namespace {

// Runs `fn` with the GIL; a Python exception becomes a Status naming the scheduler and method, and
// is kept for the binding to raise as it was.
template <typename Fn>
auto Call(const std::string& scheduler, const char* method, Fn fn) -> Result<decltype(fn())> {
  py::gil_scoped_acquire gil;
  try {
    return fn();
  } catch (py::error_already_set& e) {
    std::string message = e.what();
    KeepPluginError(e, message);
    return InvalidArgumentError(fmt::format("scheduler {}: {}: {}", scheduler, method, message));
  }
}

// Lines from the object's log_iter, read one at a time with the GIL (it may follow a live app).
class PyLinesIterator : public schedulers::LogIterator {
 public:
  PyLinesIterator(std::string scheduler, py::object it) : scheduler_(std::move(scheduler)), it_(std::move(it)) {}
  ~PyLinesIterator() override {
    py::gil_scoped_acquire gil;
    it_ = py::object();
  }
  Result<std::optional<std::string>> Next() override {
    return Call(scheduler_, "log_iter", [&]() -> std::optional<std::string> {
      PyObject* item = PyIter_Next(it_.ptr());
      if (item == nullptr) {
        if (PyErr_Occurred()) throw py::error_already_set();
        return std::nullopt;
      }
      return py::str(py::reinterpret_steal<py::object>(item)).cast<std::string>();
    });
  }

 private:
  std::string scheduler_;
  py::object it_;
};

class PyObjectScheduler : public schedulers::Scheduler {
 public:
  PyObjectScheduler(std::string name, std::string session, py::object adapter, specs::RunOpts opts, bool lists)
      : Scheduler(std::move(name), std::move(session)),
        adapter_(std::move(adapter)),
        opts_(std::move(opts)),
        lists_(lists) {}
  ~PyObjectScheduler() override {
    py::gil_scoped_acquire gil;
    adapter_ = py::object();
  }

  specs::RunOpts run_opts() const override { return opts_; }
  schedulers::Capabilities capabilities() const override {
    schedulers::Capabilities caps{schedulers::Capability::kLogs, schedulers::Capability::kFollowLogs,
                                  schedulers::Capability::kLogTimestamps, schedulers::Capability::kDelete};
    return lists_ ? caps.With(schedulers::Capability::kList) : caps;
  }
  // TorchX asks the object (Scheduler._validate), which the adapter calls in the dry run.
  bool requires_resources() const override { return false; }
  bool applies_log_filter() const override { return true; }
  bool checks_app_itself() const override { return true; }

  Result<std::string> Schedule(const schedulers::DryRunInfo& info) override {
    return Call(backend(), "schedule", [&] { return adapter_.attr("schedule")(info.payload).cast<std::string>(); });
  }

  Result<std::optional<schedulers::DescribeAppResponse>> Describe(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(std::string text, Call(backend(), "describe", [&] {
                              return adapter_.attr("describe")(app_id).cast<std::string>();
                            }));
    return plugins::DescribeFromJson(backend(), app_id, text);
  }

  ::torchx::Status Delete(const std::string& app_id) override { return CallById("delete", app_id); }

  Result<std::vector<schedulers::ListAppResponse>> List() override {
    TORCHX_ASSIGN_OR_RETURN(std::string text,
                            Call(backend(), "list", [&] { return adapter_.attr("list")().cast<std::string>(); }));
    return plugins::ListFromJson(backend(), text);
  }

  Result<std::unique_ptr<schedulers::LogIterator>> LogIter(const std::string& app_id,
                                                           const schedulers::LogOptions& o) override {
    TORCHX_ASSIGN_OR_RETURN(py::object it, Call(backend(), "log_iter", [&] {
                              // TorchX's Stream, or None for the combined log (what callers pass).
                              py::object stream = py::none();
                              if (o.stream == schedulers::LogStream::kStdout) stream = py::str("stdout");
                              if (o.stream == schedulers::LogStream::kStderr) stream = py::str("stderr");
                              return py::iter(adapter_.attr("log_iter")(app_id, o.role, o.replica, o.regex, o.since,
                                                                        o.until, o.follow, stream));
                            }));
    return std::unique_ptr<schedulers::LogIterator>(std::make_unique<PyLinesIterator>(backend(), std::move(it)));
  }

 protected:
  Result<schedulers::DryRunInfo> DoDryRun(const specs::AppDef& app, const specs::ResolvedCfg& cfg) override {
    schedulers::DryRunInfo info;
    info.app = app;
    std::string app_json = specs::AppDefToJson(app, -1);
    std::string cfg_json = specs::CfgToJson(cfg.values());
    TORCHX_ASSIGN_OR_RETURN(
        auto out, Call(backend(), "dryrun", [&] {
          return adapter_.attr("dryrun_app")(app_json, cfg_json, backend()).cast<std::pair<std::string, std::string>>();
        }));
    info.request = std::move(out.first);
    info.payload = std::move(out.second);
    return info;
  }

  ::torchx::Status DoCancel(const std::string& app_id) override { return CallById("cancel", app_id); }

 private:
  // An adapter method that takes an app id and answers nothing (cancel, delete).
  ::torchx::Status CallById(const char* method, const std::string& app_id) {
    return Call(backend(), method,
                [&] {
                  adapter_.attr(method)(app_id);
                  return true;
                })
        .status();
  }

  py::object adapter_;
  specs::RunOpts opts_;
  bool lists_;
};

}  // namespace

schedulers::SchedulerFactory PyObjectSchedulerFactory(std::string name, py::object make_adapter) {
  // Held for as long as any copy of the factory (the registry keeps it for the process).
  auto held = std::shared_ptr<py::object>(new py::object(std::move(make_adapter)), [](py::object* p) {
    if (!Py_IsInitialized()) return;  // a registry's copy, at exit: the interpreter is gone
    py::gil_scoped_acquire gil;
    delete p;
  });
  return [held, name](const schedulers::SchedulerContext& context) -> Result<std::unique_ptr<schedulers::Scheduler>> {
    py::gil_scoped_acquire gil;  // the adapter's references are made and dropped here
    py::object adapter;
    bool lists = true;
    TORCHX_ASSIGN_OR_RETURN(std::string opts_json, Call(name, "create", [&] {
                              adapter = (*held)(context.session_name);
                              lists = adapter.attr("can_list")().cast<bool>();
                              return adapter.attr("runopts_json")().cast<std::string>();
                            }));
    TORCHX_ASSIGN_OR_RETURN(specs::RunOpts opts, specs::RunOptsFromJson(opts_json));
    return std::unique_ptr<schedulers::Scheduler>(
        std::make_unique<PyObjectScheduler>(name, context.session_name, std::move(adapter), std::move(opts), lists));
  };
}

}  // namespace torchx::python
