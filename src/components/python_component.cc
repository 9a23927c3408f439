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
  Status Start() { return process_.Start("torchx.components._bridge", "Python components"); }

  Result<Json> Call(const Json& request) {
    TORCHX_ASSIGN_OR_RETURN(std::string reply,
                            process_.Call(request.dump(-1, ' ', false, Json::error_handler_t::replace)));
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

Result<std::unique_ptr<Component>> LoadPythonComponent(std::string_view name) {
  auto bridge = std::make_unique<Bridge>();
  TORCHX_RETURN_IF_ERROR(bridge->Start());
  TORCHX_ASSIGN_OR_RETURN(Json reply, bridge->Call({{"op", "describe"}, {"component", name}}));
  if (!reply.contains("spec")) return InternalError("python component bridge: reply without a spec");
  TORCHX_ASSIGN_OR_RETURN(ComponentSpec spec, ComponentSpecFromJson(reply["spec"].dump()));
  std::string origin(name.substr(0, name.rfind(':')));
  return std::unique_ptr<Component>(std::make_unique<PythonComponent>(std::move(spec), std::move(bridge), origin));
}

}  // namespace torchx::components::internal
