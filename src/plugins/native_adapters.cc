// Components and schedulers from native plugins: the core's interfaces over the C descriptors,
// speaking the JSON forms of plugin_abi.h. Strings the plugin returns are freed with its own
// free_string.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "plugins/json_scheduler.h"
#include "plugins/native_loader.h"
#include "torchx/components/component_json.h"
#include "torchx/specs/serialize.h"

namespace torchx::plugins {
namespace {

using Json = nlohmann::json;

// Calls fn(&error) and takes ownership of both strings.
template <typename Fn>
Result<std::string> CallPlugin(void (*free_string)(char*), std::string_view what, Fn fn) {
  char* error = nullptr;
  char* out = fn(&error);
  std::string err = error ? error : "";
  if (error) free_string(error);
  if (!out) return UnavailableError(fmt::format("{}: {}", what, err.empty() ? "the plugin failed" : err));
  std::string result(out);
  free_string(out);
  return result;
}

class NativeComponent : public components::Component {
 public:
  NativeComponent(const TorchxComponent& c, components::ComponentSpec spec, std::string origin)
      : c_(c), spec_(std::move(spec)), origin_(std::move(origin)) {}
  const components::ComponentSpec& spec() const override { return spec_; }
  std::string origin() const override { return origin_; }
  Result<specs::AppDef> Build(const components::ComponentArgs& args,
                              const components::BuildContext& context) const override {
    std::string in = components::ComponentArgsToJson(args);
    auto out =
        CallPlugin(c_.free_string, spec_.name, [&](char** error) { return c_.build(c_.user, in.c_str(), error); });
    if (!out) return InvalidArgumentError(out.error().message());
    return specs::AppDefFromJson(*out, context.named_resources);
  }

 private:
  TorchxComponent c_;
  components::ComponentSpec spec_;
  std::string origin_;
};

// The channel over a native plugin's C functions.
class NativeChannel : public JsonSchedulerChannel {
 public:
  NativeChannel(const TorchxScheduler& s, void* self) : s_(s), self_(self) {}
  ~NativeChannel() override {
    if (s_.destroy) s_.destroy(self_);
  }
  Result<std::string> DryRun(const std::string& req) override {
    return Call("dryrun", [&](char** e) { return s_.dryrun(self_, req.c_str(), e); });
  }
  Result<std::string> Schedule(const std::string& payload) override {
    return Call("schedule", [&](char** e) { return s_.schedule(self_, payload.c_str(), e); });
  }
  Result<std::string> Describe(const std::string& app_id) override {
    return Call("describe", [&](char** e) { return s_.describe(self_, app_id.c_str(), e); });
  }
  Status Cancel(const std::string& app_id) override {
    return Call("cancel", [&](char** e) { return s_.cancel(self_, app_id.c_str(), e); }).status();
  }
  Result<std::string> List() override {
    if (!s_.list) return UnimplementedError(fmt::format("{}: list is not supported", s_.name));
    return Call("list", [&](char** e) { return s_.list(self_, e); });
  }
  Result<std::string> Logs(const std::string& req) override {
    if (!s_.logs) return UnimplementedError(fmt::format("{}: logs are not supported", s_.name));
    return Call("logs", [&](char** e) { return s_.logs(self_, req.c_str(), e); });
  }

 private:
  template <typename Fn>
  Result<std::string> Call(std::string_view what, Fn fn) {
    return CallPlugin(s_.free_string, fmt::format("{}: {}", s_.name, what), fn);
  }
  TorchxScheduler s_;
  void* self_;
};

}  // namespace

std::shared_ptr<const components::Component> MakeNativeComponent(const TorchxComponent& c, std::string origin,
                                                                 Status* error) {
  auto spec = components::ComponentSpecFromJson(c.spec_json);
  if (!spec) {
    *error = spec.error();
    return nullptr;
  }
  return std::make_shared<NativeComponent>(c, std::move(*spec), std::move(origin));
}

schedulers::SchedulerFactory MakeNativeSchedulerFactory(const TorchxScheduler& desc) {
  TorchxScheduler s = desc;
  return [s](const schedulers::SchedulerContext& context) -> Result<std::unique_ptr<schedulers::Scheduler>> {
    const std::string& session = context.session_name;
    specs::RunOpts opts;
    if (s.runopts_json) {
      TORCHX_ASSIGN_OR_RETURN(opts, specs::RunOptsFromJson(s.runopts_json));
    }
    void* self = s.create(s.user, session.c_str());
    if (!self) return UnavailableError(fmt::format("{}: the plugin could not create the scheduler", s.name));
    schedulers::Capabilities caps;
    if (s.list) caps = caps.With(schedulers::Capability::kList);
    if (s.logs) caps = caps.With(schedulers::Capability::kLogs);
    return MakeJsonScheduler(s.name, session, std::move(opts), std::make_unique<NativeChannel>(s, self), caps);
  };
}

}  // namespace torchx::plugins
