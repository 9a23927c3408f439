// utils.*: small single-role apps (echo, touch, sh, python, binary) and the helper apps that
// need this project's Python package in the image (copy, booth).
#include <fmt/format.h>

#include "components/builtins/builtins.h"
#include "components/function_component.h"
#include "core/pystr.h"
#include "torchx/specs/named_resources.h"

namespace torchx::components::internal {
namespace {

specs::Resource Small() { return specs::Resource{1, 0, 1024, {}, {}, {}}; }

Param Image() { return WithDefault("image", ParamType::kStr, DefaultImage(), "image to run"); }
Param NumReplicas() { return WithDefault("num_replicas", ParamType::kInt, 1, "number of replicas"); }
Param Mounts() {
  return OptionalNone("mounts", ParamType::kListStr, "mounts, e.g. type=bind,src=/host,dst=/job[,readonly]");
}
// The role's mounts from the `mounts` argument (none when absent or empty).
Status SetMounts(const ComponentArgs& a, specs::Role& role) {
  if (auto mounts = a.OptList("mounts"); mounts && !mounts->empty()) {
    TORCHX_ASSIGN_OR_RETURN(role.mounts, specs::ParseMounts(*mounts));
  }
  return OkStatus();
}
std::vector<Param> Sizing() {
  return {WithDefault("cpu", ParamType::kInt, 1, "CPUs per replica"),
          WithDefault("gpu", ParamType::kInt, 0, "GPUs per replica"),
          WithDefault("memMB", ParamType::kInt, 1024, "memory per replica in MB"),
          OptionalNone("h", ParamType::kStr, "named resource (wins over cpu, gpu, memMB)")};
}
Result<specs::Resource> SizedResource(const ComponentArgs& a, const BuildContext& ctx) {
  return specs::MakeResource(static_cast<int>(a.Int("cpu")), static_cast<int>(a.Int("gpu")),
                             static_cast<int>(a.Int("memMB")), a.OptStr("h").value_or(""), ctx.named_resources);
}

specs::AppDef OneRole(std::string app_name, specs::Role role) {
  return specs::AppDef{std::move(app_name), {std::move(role)}, {}};
}

void Add(std::vector<std::shared_ptr<const Component>>& r, ComponentSpec spec, BuildFn fn) {
  r.push_back(std::make_shared<FunctionComponent>(std::move(spec), std::move(fn)));
}

std::vector<Param> Concat(std::vector<Param> a, const std::vector<Param>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

void AddUtilsComponents(std::vector<std::shared_ptr<const Component>>& r) {
  Add(r,
      {"utils.echo",
       "Prints a message to stdout (runs echo).",
       "",
       {WithDefault("msg", ParamType::kStr, "hello world", "message to print"), Image(), NumReplicas()},
       std::nullopt},
      [](const ComponentArgs& a, const BuildContext&) -> Result<specs::AppDef> {
        specs::Role role;
        role.name = "echo";
        role.image = a.Str("image");
        role.entrypoint = "echo";
        role.args = {a.Str("msg")};
        role.num_replicas = static_cast<int>(a.Int("num_replicas"));
        role.resource = Small();
        return OneRole("echo", std::move(role));
      });

  Add(r,
      {"utils.touch",
       "Creates a file or updates its time (runs touch).",
       "",
       {Required("file", ParamType::kStr, "the file to touch"), Image()},
       std::nullopt},
      [](const ComponentArgs& a, const BuildContext&) -> Result<specs::AppDef> {
        specs::Role role;
        role.name = "touch";
        role.image = a.Str("image");
        role.entrypoint = "touch";
        role.args = {a.Str("file")};
        role.resource = Small();
        return OneRole("touch", std::move(role));
      });

  Add(r,
      {"utils.sh", "Runs a command line through sh -c (or a given entrypoint).",
       "Each argument is shell-quoted, so it reaches the program as given.",
       Concat({Image(), NumReplicas()},
              Concat(Sizing(),
                     {OptionalNone("env", ParamType::kDictStr, "environment variables, e.g. A=1,B=2"),
                      WithDefault("max_retries", ParamType::kInt, 0, "how many times the scheduler may retry"),
                      Mounts(), OptionalNone("entrypoint", ParamType::kStr, "program to run instead of sh -c")})),
       VarArgs("args", "the command and its arguments")},
      [](const ComponentArgs& a, const BuildContext& ctx) -> Result<specs::AppDef> {
        std::vector<std::string> quoted;
        for (const std::string& arg : a.varargs) quoted.push_back(::torchx::internal::ShlexQuote(arg));
        specs::Role role;
        role.name = "sh";
        role.image = a.Str("image");
        if (auto ep = a.OptStr("entrypoint")) {
          role.entrypoint = *ep;
          role.args = quoted;
        } else {
          std::string joined;
          for (const std::string& q : quoted) joined += (joined.empty() ? "" : " ") + q;
          role.entrypoint = "sh";
          role.args = {"-c", joined};
        }
        role.num_replicas = static_cast<int>(a.Int("num_replicas"));
        TORCHX_ASSIGN_OR_RETURN(role.resource, SizedResource(a, ctx));
        role.env = a.OptDict("env").value_or(std::map<std::string, std::string>{});
        role.env.emplace("LOGLEVEL", DefaultLogLevel());
        role.max_retries = static_cast<int>(a.Int("max_retries"));
        TORCHX_RETURN_IF_ERROR(SetMounts(a, role));
        return OneRole("sh", std::move(role));
      });

  Add(r,
      {"utils.python", "Runs python with a module (-m), a command (-c) or a script.", "",
       Concat({OptionalNone("m", ParamType::kStr, "module to run"),
               OptionalNone("c", ParamType::kStr, "program passed in as a string"),
               OptionalNone("script", ParamType::kStr, "script to run"), Image(),
               WithDefault("name", ParamType::kStr, "torchx_utils_python", "app name")},
              Concat(Sizing(), {NumReplicas(), Mounts()})),
       VarArgs("args", "arguments for the program")},
      [](const ComponentArgs& a, const BuildContext& ctx) -> Result<specs::AppDef> {
        auto m = a.OptStr("m"), c = a.OptStr("c"), script = a.OptStr("script");
        if (m.has_value() + c.has_value() + script.has_value() != 1) {
          return InvalidArgumentError("-m, -c, --script: exactly one of -m, -c and --script must be specified");
        }
        specs::Role role;
        role.name = "python";
        role.image = a.Str("image");
        role.entrypoint = "python";
        if (script) role.args = {*script};
        if (m) role.args = {"-m", *m};
        if (c) role.args = {"-c", *c};
        role.args.insert(role.args.end(), a.varargs.begin(), a.varargs.end());
        role.num_replicas = static_cast<int>(a.Int("num_replicas"));
        TORCHX_ASSIGN_OR_RETURN(role.resource, SizedResource(a, ctx));
        if (m) role.env["HYDRA_MAIN_MODULE"] = *m;
        TORCHX_RETURN_IF_ERROR(SetMounts(a, role));
        return OneRole(a.Str("name"), std::move(role));
      });

  Add(r,
      {"utils.binary", "Runs a program directly (no image).", "",
       Concat({Required("entrypoint", ParamType::kStr, "program to run"),
               WithDefault("name", ParamType::kStr, "torchx_utils_binary", "app name"), NumReplicas()},
              Sizing()),
       VarArgs("args", "arguments for the program")},
      [](const ComponentArgs& a, const BuildContext& ctx) -> Result<specs::AppDef> {
        specs::Role role;
        role.name = "binary";
        role.image = "<NONE>";
        role.entrypoint = a.Str("entrypoint");
        role.args = a.varargs;
        role.num_replicas = static_cast<int>(a.Int("num_replicas"));
        TORCHX_ASSIGN_OR_RETURN(role.resource, SizedResource(a, ctx));
        return OneRole(a.Str("name"), std::move(role));
      });

  Add(r,
      {"utils.copy",
       "Copies one file from src to dst (local paths or fsspec URLs).",
       "Runs the helper app torchx.apps.utils.copy_main from this project's Python package.",
       {Required("src", ParamType::kStr, "source path or URL"),
        Required("dst", ParamType::kStr, "destination path or URL"), Image(), Mounts()},
       std::nullopt},
      [](const ComponentArgs& a, const BuildContext&) -> Result<specs::AppDef> {
        specs::Role role;
        TORCHX_RETURN_IF_ERROR(SetMounts(a, role));
        role.name = "torchx-utils-copy";
        role.image = a.Str("image");
        role.entrypoint = "python";
        role.args = {"-m", "torchx.apps.utils.copy_main", "--src", a.Str("src"), "--dst", a.Str("dst")};
        role.resource = Small();
        return OneRole("torchx-utils-copy", std::move(role));
      });

  Add(r,
      {"utils.booth",
       "Evaluates the Booth function (x1 + 2*x2 - 7)^2 + (2*x1 + x2 - 5)^2.",
       "Writes {\"booth_eval\": value} for trial_idx to a result tracker under tracker_base\n"
       "(the hyper-parameter search example that Ax drives).",
       {Required("x1", ParamType::kFloat, "x1"), Required("x2", ParamType::kFloat, "x2"),
        WithDefault("trial_idx", ParamType::kInt, 0, "trial index, the tracker key"),
        WithDefault("tracker_base", ParamType::kStr, "/tmp/torchx-util-booth", "tracker directory or URL"), Image()},
       std::nullopt},
      [](const ComponentArgs& a, const BuildContext&) -> Result<specs::AppDef> {
        specs::Role role;
        role.name = "torchx-utils-booth";
        role.image = a.Str("image");
        role.entrypoint = "python";
        role.args = {"-m",
                     "torchx.apps.utils.booth_main",
                     "--x1",
                     ::torchx::internal::PyFloatStr(a.Float("x1")),
                     "--x2",
                     ::torchx::internal::PyFloatStr(a.Float("x2")),
                     "--trial_idx",
                     std::to_string(a.Int("trial_idx")),
                     "--tracker_base",
                     a.Str("tracker_base")};
        role.resource = Small();
        return OneRole("torchx-utils-booth", std::move(role));
      });
}

}  // namespace torchx::components::internal
