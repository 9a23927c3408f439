// Python plugins for the CLI: a provider that, the first time the registry needs a scheduler,
// named resource or tracker it does not have, starts `python -m torchx.plugins._bridge` and
// registers what Python discovers (torchx_plugins.* modules, entry points). Python schedulers are
// then driven through the same process. Nothing starts while only built-ins are used.
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/python_bridge.h"
#include "plugins/json_scheduler.h"
#include "plugins/python_plugin_hints.h"
#include "torchx/plugins/registry.h"
#include "torchx/specs/serialize.h"

namespace torchx::plugins {
namespace {

using Json = nlohmann::json;

class Bridge {
 public:
  /// True once, for the first failure to start or talk to Python (reported once, not per type).
  bool FirstFailure() { return !std::exchange(failure_reported_, true); }

  Result<Json> Call(const Json& request) {
    std::lock_guard lock(mu_);  // one request/reply at a time (log streaming uses threads)
    if (!start_error_.ok()) return start_error_;
    if (!process_.started()) {
      if (!start_error_.ok()) return start_error_;
      start_error_ = process_.Start("torchx.plugins._bridge", "Python plugins");
      if (!start_error_.ok()) return start_error_;
    }
    auto reply = process_.Call(request.dump(-1, ' ', false, Json::error_handler_t::replace));
    if (!reply) {
      start_error_ = reply.error();  // the child is gone: do not ask again
      return start_error_;
    }
    Json j = Json::parse(*reply, nullptr, false);
    if (!j.is_object()) return InternalError("python plugin bridge: unreadable reply");
    if (j.contains("error")) {
      return InvalidArgumentError(
          fmt::format("{}: {}", j["error"].value("type", "Exception"), j["error"].value("message", "")));
    }
    return j;
  }

 private:
  std::mutex mu_;
  ::torchx::internal::PythonBridge process_;
  Status start_error_;
  bool failure_reported_ = false;
};

class BridgeChannel : public JsonSchedulerChannel {
 public:
  BridgeChannel(std::shared_ptr<Bridge> bridge, int id) : bridge_(std::move(bridge)), id_(id) {}
  Result<std::string> DryRun(const std::string& r) override { return Call("dryrun", r); }
  Result<std::string> Schedule(const std::string& p) override { return Call("schedule", p); }
  Result<std::string> Describe(const std::string& id) override { return Call("describe", id); }
  Status Cancel(const std::string& id) override { return Call("cancel", id).status(); }
  Result<std::string> List() override { return Call("list", nullptr); }
  Result<std::string> Logs(const std::string& r) override { return Call("logs", r); }

 private:
  Result<std::string> Call(const char* method, Json arg) {
    TORCHX_ASSIGN_OR_RETURN(Json reply, bridge_->Call({{"op", "call"}, {"id", id_}, {"method", method}, {"arg", arg}}));
    return reply.value("result", "");
  }
  std::shared_ptr<Bridge> bridge_;
  int id_;
};

void Provide(const std::shared_ptr<Bridge>& bridge, PluginType type, PluginRegistry& registry) {
  if (type != PluginType::kScheduler && type != PluginType::kNamedResource && type != PluginType::kTracker) return;
  auto reply = bridge->Call({{"op", "discover"}, {"type", PluginTypeName(type)}});
  if (!reply) {
    if (bridge->FirstFailure()) registry.AddError({"python", "python", reply.error().message()});
    return;
  }
  for (const Json& e : (*reply)["errors"]) {
    if (e.is_array() && e.size() == 3) registry.AddError({e[0], e[1], e[2]});
  }
  for (const Json& e : (*reply)["entries"]) {
    std::string name = e.value("name", ""), source = e.value("source", "python");
    if (type == PluginType::kNamedResource) {
      auto res = specs::ResourceFromJson(e["resource"].dump());
      if (!res) {
        registry.AddError({source, "python", fmt::format("named resource {}: {}", name, res.error().message())});
        continue;
      }
      (void)registry.AddNamedResource(name, source, [r = *res] { return Result<specs::Resource>(r); });
    } else if (type == PluginType::kScheduler) {
      (void)registry.AddScheduler(
          name, source,
          [bridge,
           name](const schedulers::SchedulerContext& context) -> Result<std::unique_ptr<schedulers::Scheduler>> {
            const std::string& session = context.session_name;
            TORCHX_ASSIGN_OR_RETURN(Json made,
                                    bridge->Call({{"op", "scheduler"}, {"name", name}, {"session", session}}));
            TORCHX_ASSIGN_OR_RETURN(specs::RunOpts opts, specs::RunOptsFromJson(made.value("runopts", "[]")));
            return MakeJsonScheduler(name, session, std::move(opts),
                                     std::make_unique<BridgeChannel>(bridge, made.value("id", 0)),
                                     {schedulers::Capability::kList, schedulers::Capability::kLogs});
          });
    } else {
      (void)registry.AddTracker(name, source, "");
    }
  }
}

}  // namespace

void AddPythonBridgeProvider(PluginRegistry& registry) {
  auto bridge = std::make_shared<Bridge>();
  // Whether Python may have a scheduler of a built-in's name (or any, for the default): read from
  // the installed distributions' entry points and the plugin packages' directories, once.
  auto hints = std::make_shared<std::optional<PythonPluginHints>>();
  auto mu = std::make_shared<std::mutex>();
  registry.AddProvider(
      "python-bridge", [bridge](PluginType t, PluginRegistry& r) { Provide(bridge, t, r); },
      [hints, mu](PluginType t, std::string_view name) {
        if (t != PluginType::kScheduler) return false;
        std::lock_guard lock(*mu);
        if (!*hints) *hints = CachedPythonPluginHints();
        return (*hints)->MayHaveScheduler(name);
      });
}

}  // namespace torchx::plugins
