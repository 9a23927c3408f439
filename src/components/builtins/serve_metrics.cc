// serve.torchserve and metrics.tensorboard: long-running helper apps.
#include <fmt/format.h>

#include "components/builtins/builtins.h"
#include "components/function_component.h"
#include "core/pystr.h"

namespace torchx::components::internal {

void AddServeComponents(std::vector<std::shared_ptr<const Component>>& out) {
  out.push_back(std::make_shared<FunctionComponent>(
      ComponentSpec{
          "serve.torchserve",
          "Deploys a model archive (.mar) to a TorchServe management API.",
          "Runs torchx.apps.serve.serve, which serves the archive over HTTP on port 8222 and\n"
          "registers it with the management API; params become --<name> <value> options.",
          {Required("model_path", ParamType::kStr, "path or URL of the .mar file"),
           Required("management_api", ParamType::kStr, "URL of the TorchServe management API"),
           WithDefault("image", ParamType::kStr, DefaultImage(), "image to run"),
           OptionalNone("params", ParamType::kDictStr, "registration parameters, e.g. model_name=x,initial_workers=1"),
           WithDefault("dryrun", ParamType::kBool, false, "check the archive without registering")},
          std::nullopt},
      [](const ComponentArgs& a, const BuildContext&) -> Result<specs::AppDef> {
        specs::Role role;
        role.name = "worker";
        role.image = a.Str("image");
        role.entrypoint = "python";
        role.args = {"-m",
                     "torchx.apps.serve.serve",
                     "--model_path",
                     a.Str("model_path"),
                     "--management_api",
                     a.Str("management_api")};
        if (auto params = a.OptDict("params")) {
          for (const auto& [k, v] : *params) {
            role.args.push_back("--" + k);
            role.args.push_back(v);
          }
        }
        if (a.Bool("dryrun")) role.args.push_back("--dryrun");
        role.port_map = {{"model-download", 8222}};
        role.resource = specs::Resource{1, 0, 1024, {}, {}, {}};
        return specs::AppDef{"torchx-torchserve", {std::move(role)}, {}};
      }));
}

void AddMetricsComponents(std::vector<std::shared_ptr<const Component>>& out) {
  out.push_back(std::make_shared<FunctionComponent>(
      ComponentSpec{"metrics.tensorboard",
                    "Runs a TensorBoard server over a log directory.",
                    "TensorBoard runs under torchx.apps.utils.process_monitor, which can wait for\n"
                    "start_on_file to exist before starting it and stops it when exit_on_file appears or\n"
                    "after timeout seconds.",
                    {Required("logdir", ParamType::kStr, "log directory or URL"),
                     WithDefault("image", ParamType::kStr, DefaultImage(), "image to run"),
                     WithDefault("timeout", ParamType::kFloat, 3600.0, "seconds before stopping the server"),
                     WithDefault("port", ParamType::kInt, 6006, "port to serve on"),
                     WithDefault("start_on_file", ParamType::kStr, "", "start only once this file exists"),
                     WithDefault("exit_on_file", ParamType::kStr, "", "stop when this file appears")},
                    std::nullopt},
      [](const ComponentArgs& a, const BuildContext&) -> Result<specs::AppDef> {
        specs::Role role;
        role.name = "tensorboard";
        role.image = a.Str("image");
        role.entrypoint = "python";
        std::string port = std::to_string(a.Int("port"));
        role.args = {"-m",
                     "torchx.apps.utils.process_monitor",
                     "--timeout",
                     ::torchx::internal::PyFloatStr(a.Float("timeout")),
                     "--start_on_file",
                     a.Str("start_on_file"),
                     "--exit_on_file",
                     a.Str("exit_on_file"),
                     "--",
                     "tensorboard",
                     "--bind_all",
                     "--port",
                     port,
                     "--logdir",
                     a.Str("logdir")};
        role.port_map = {{"http", static_cast<int>(a.Int("port"))}};
        // Deliberate fix: TorchX leaves this role without a resource, so its own runner rejects it.
        role.resource = specs::Resource{1, 0, 1024, {}, {}, {}};
        return specs::AppDef{"tensorboard", {std::move(role)}, {}};
      }));
}

}  // namespace torchx::components::internal
