#include "components/python_component.h"

#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/python_bridge.h"
#include "torchx/components/component_json.h"
#include "torchx/specs/serialize.h"

namespace torchx::components::internal {
namespace {

using Json = nlohmann::json;

// One child interpreter for the component; replies parsed and mapped to Status here.
class Bridge {
 public:
  explicit Bridge(std::optional<std::chrono::milliseconds> timeout) : timeout_(timeout) {}
  Status Start() { return process_.Start("torchx.components._bridge", "Python components", timeout_.has_value()); }

  Result<Json> Call(const Json& request) {
    TORCHX_ASSIGN_OR_RETURN(std::string reply,
                            process_.Call(request.dump(-1, ' ', false, Json::error_handler_t::replace), timeout_));
    Json j = Json::parse(reply, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return InternalError("python component bridge: unreadable reply");
    if (j.contains("error")) {
      std::string type = j["error"].value("type", "Exception");
      std::string message = j["error"].value("message", "");
      if (type == "ComponentNotFoundException") return NotFoundError(message);
      return InvalidArgumentError(type == "ComponentValidationException" || type == "ValueError"
                                      ? message
                                      : fmt::format("{}: {}", type, message));
    }
    return j;
  }

 private:
  std::optional<std::chrono::milliseconds> timeout_;
  ::torchx::internal::PythonBridge process_;
};

class PythonComponent : public Component {
 public:
  PythonComponent(ComponentSpec spec, std::unique_ptr<Bridge> bridge, std::string origin)
      : spec_(std::move(spec)), bridge_(std::move(bridge)), origin_(std::move(origin)) {}

  const ComponentSpec& spec() const override { return spec_; }
  std::string origin() const override { return origin_; }

  Result<specs::AppDef> Build(const ComponentArgs& args, const BuildContext& context) const override {
    Json request = Json::parse(ComponentArgsToJson(args));
    request["op"] = "build";
    TORCHX_ASSIGN_OR_RETURN(Json reply, bridge_->Call(request));
    if (!reply.contains("app")) return InternalError("python component bridge: reply without an app");
    return specs::AppDefFromJson(reply["app"].dump(-1, ' ', false, Json::error_handler_t::replace),
                                 context.named_resources);
  }

 private:
  ComponentSpec spec_;
  std::unique_ptr<Bridge> bridge_;
  std::string origin_;
};

}  // namespace

Result<std::unique_ptr<Component>> LoadPythonComponent(std::string_view name,
                                                       std::optional<std::chrono::milliseconds> timeout) {
  auto bridge = std::make_unique<Bridge>(timeout);
  TORCHX_RETURN_IF_ERROR(bridge->Start());
  auto described = bridge->Call({{"op", "describe"}, {"component", name}});
  if (!described && described.error().code() == StatusCode::kDeadlineExceeded) {
    return DeadlineExceededError(
        fmt::format("component `{}`: loading it took longer than {:.0f} s (a component file "
                    "runs at import); it was stopped",
                    name, static_cast<double>(timeout->count()) / 1000.0));
  }
  TORCHX_ASSIGN_OR_RETURN(Json reply, std::move(described));
  if (!reply.contains("spec")) return InternalError("python component bridge: reply without a spec");
  TORCHX_ASSIGN_OR_RETURN(ComponentSpec spec, ComponentSpecFromJson(reply["spec"].dump()));
  std::string origin(name.substr(0, name.rfind(':')));
  return std::unique_ptr<Component>(std::make_unique<PythonComponent>(std::move(spec), std::move(bridge), origin));
}

}  // namespace torchx::components::internal
