// dist.torchrun and its deprecated aliases dist.ddp and dist.spmd: torchrun-launched distributed
// apps, with TorchX's exact command line.
#include <re2/re2.h>

#include "components/builtins/dist.h"

#include <cstdlib>

#include <fmt/format.h>

#include "components/builtins/builtins.h"
#include "components/function_component.h"
#include "core/pystr.h"
#include "torchx/specs/macros.h"
#include "torchx/specs/named_resources.h"

namespace torchx::components::internal {
namespace {

Result<int> ToInt(const std::string& s, const std::string& what) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 0 || v > 1000000) {
    return InvalidArgumentError(fmt::format("{}: invalid number '{}' (0..1000000)", what, s));
  }
  return static_cast<int>(v);
}

// Arguments for ddp, shared by spmd.
struct DdpOptions {
  std::vector<std::string> script_args;
  std::optional<std::string> script, m;
  std::string image, name, h, j;
  int cpu = 2, gpu = 0, memMB = 1024;
  std::map<std::string, std::string> env;
  std::map<std::string, std::string> metadata;
  int max_retries = 0, rdzv_port = 29500, tee = 3;
  std::string rdzv_backend = "c10d";
  std::optional<std::string> rdzv_conf;
  std::optional<std::vector<std::string>> mounts;
  bool debug = false;
};

Result<specs::AppDef> BuildDdp(DdpOptions o, const BuildContext& ctx) {
  if (o.script.has_value() == o.m.has_value()) {
    return InvalidArgumentError("--script, -m: exactly one of --script and -m must be specified");
  }
  TORCHX_ASSIGN_OR_RETURN(NNodes nn, ParseNNodes(o.j, ctx.devices));
  std::string endpoint = nn.max_nodes == 1
                             ? "localhost:0"  // one node: torchrun picks a free port, rdzv_port is ignored
                             : fmt::format("$${{{}:=localhost}}:{}", specs::macros::kRank0Env, o.rdzv_port);
  TORCHX_ASSIGN_OR_RETURN(StructuredName name, ParseStructuredName(o.name, o.m.value_or(""), o.script.value_or("")));
  o.env["TORCHX_TRACKING_EXPERIMENT_NAME"] = name.experiment;
  o.env["TORCHX_TRACKING_RUN_NAME"] = name.run;
  o.env.emplace("LOGLEVEL", DefaultLogLevel());
  if (o.debug) {
    for (const auto& [k, v] : TorchDebugFlags()) o.env[k] = v;
  }
  // Every token is shell-quoted except the endpoint, whose ${VAR:=localhost} the shell expands.
  std::vector<std::string> cmd = {"torchrun", "--rdzv_backend", o.rdzv_backend};
  if (o.rdzv_conf) {
    cmd.push_back("--rdzv_conf");
    cmd.push_back(*o.rdzv_conf);
  }
  std::string joined;
  auto add = [&joined](const std::string& token, bool quote = true) {
    joined += (joined.empty() ? "" : " ") + (quote ? ::torchx::internal::ShlexQuote(token) : token);
  };
  for (const std::string& t : cmd) add(t);
  add("--rdzv_endpoint");
  add(endpoint, /*quote=*/false);
  for (const std::string& t : std::vector<std::string>{"--rdzv_id", std::string(specs::macros::kAppId), "--nnodes",
                                                       nn.nnodes, "--nproc_per_node", std::to_string(nn.nproc_per_node),
                                                       "--tee", std::to_string(o.tee), "--role", ""}) {
    add(t);
  }
  if (o.rdzv_backend == "static") {
    add("--node_rank");
    add(std::string(specs::macros::kReplicaId));
  }
  if (o.script) {
    add(*o.script);
  } else {
    add("-m");
    add(*o.m);
  }
  for (const std::string& a : o.script_args) add(a);

  specs::Role role;
  role.name = o.script ? PathStem(*o.script) : o.m->substr(o.m->rfind('.') + 1);
  role.image = o.image;
  role.min_replicas = nn.min_nodes;
  role.num_replicas = nn.max_nodes;
  role.entrypoint = "bash";
  role.args = {"-c", joined};
  role.env = o.env;
  role.port_map = {{"c10d", o.rdzv_port}};
  role.max_retries = o.max_retries;
  TORCHX_ASSIGN_OR_RETURN(role.resource, specs::MakeResource(o.cpu, o.gpu, o.memMB, o.h, ctx.named_resources));
  if (o.mounts && !o.mounts->empty()) {
    TORCHX_ASSIGN_OR_RETURN(role.mounts, specs::ParseMounts(*o.mounts));
  }
  return specs::AppDef{name.run, {std::move(role)}, std::move(o.metadata)};
}

const Param kScript = OptionalNone("script", ParamType::kStr, "script or binary to run within the image");
const Param kModule = OptionalNone("m", ParamType::kStr, "python module to run (instead of --script)");
const Param kName = WithDefault("name", ParamType::kStr, "/",
                                "job name as {experiment}/{run}, {experiment}/, /{run} or {run}; the run "
                                "name defaults to the script or module name");
const Param kEnv = OptionalNone("env", ParamType::kDictStr, "environment variables, e.g. A=1,B=2");
const Param kMetadata =
    OptionalNone("metadata", ParamType::kDictStr, "metadata for the scheduler (the app's metadata), e.g. K1=v1,K2=v2");
const Param kMaxRetries = WithDefault("max_retries", ParamType::kInt, 0, "how many times the scheduler may retry");
const Param kMounts =
    OptionalNone("mounts", ParamType::kListStr, "mounts, e.g. type=bind,src=/host,dst=/job[,readonly]");
const Param kDebug = WithDefault("debug", ParamType::kBool, false, "set PyTorch's debug environment variables");

DdpOptions CommonOptions(const ComponentArgs& a) {
  DdpOptions o;
  o.script_args = a.varargs;
  o.script = a.OptStr("script");
  o.m = a.OptStr("m");
  o.image = a.Str("image");
  o.name = a.Str("name");
  o.j = a.Str("j");
  o.env = a.OptDict("env").value_or(std::map<std::string, std::string>{});
  o.metadata = a.OptDict("metadata").value_or(std::map<std::string, std::string>{});
  o.max_retries = static_cast<int>(a.Int("max_retries"));
  o.mounts = a.OptList("mounts");
  o.debug = a.Bool("debug");
  return o;
}

}  // namespace

Result<NNodes> ParseNNodes(const std::string& j_in, const devices::DeviceSource* devices) {
  static const re2::RE2 kElastic(R"((\d+):(\d+)x(\d+))"), kFixed(R"((\d+)x(\d+))"), kProcs(R"(\d+)");
  std::string m1, m2, m3;
  NNodes out;
  auto num = [](const std::string& s) { return ToInt(s, "-j"); };
  std::string j = j_in;
  // `auto` processes per node: one per chip of the selected device.
  if (j == "auto" || (j.size() > 5 && j.ends_with("xauto"))) {
    if (!devices) {
      return InvalidArgumentError("-j: `auto` needs a device plugin to count chips, and none is available here");
    }
    auto chips = devices::SelectedDeviceChipCount(*devices);
    if (!chips) return InvalidArgumentError(fmt::format("-j: `auto`: {}", chips.error().message()));
    if (*chips < 1) return InvalidArgumentError("-j: `auto`: the selected device reports no chips on this host");
    j = j == "auto" ? std::to_string(*chips) : j.substr(0, j.size() - 4) + std::to_string(*chips);
  }
  if (j.size() <= 32 && re2::RE2::FullMatch(j, kElastic, &m1, &m2, &m3)) {
    TORCHX_ASSIGN_OR_RETURN(out.min_nodes, num(m1));
    TORCHX_ASSIGN_OR_RETURN(out.max_nodes, num(m2));
    TORCHX_ASSIGN_OR_RETURN(out.nproc_per_node, num(m3));
    out.nnodes = m1 + ":" + m2;
  } else if (j.size() <= 32 && re2::RE2::FullMatch(j, kFixed, &m1, &m2)) {
    TORCHX_ASSIGN_OR_RETURN(out.max_nodes, num(m1));
    out.min_nodes = out.max_nodes;
    TORCHX_ASSIGN_OR_RETURN(out.nproc_per_node, num(m2));
    out.nnodes = m1;
  } else if (j.size() <= 32 && re2::RE2::FullMatch(j, kProcs)) {
    TORCHX_ASSIGN_OR_RETURN(out.nproc_per_node, num(j));
    out.nnodes = "1";
  } else {
    return InvalidArgumentError(
        fmt::format("-j: invalid format, usage example: 1:2x4 or 1x4 or 4 (or 2xauto). Given: {}", j_in));
  }
  if (out.max_nodes < 1 || out.nproc_per_node < 1 || out.min_nodes > out.max_nodes) {
    return InvalidArgumentError(
        fmt::format("-j: nodes and processes must be >= 1 and MIN <= MAX (usage: 1:2x4 or 1x4 or 4). Given: {}", j));
  }
  return out;
}

Result<std::string> ParseSpmdJ(const std::string& h, const std::string& j,
                               const specs::NamedResourceSource* named_resources) {
  auto res = specs::GetNamedResource(h, named_resources);
  if (!res) return InvalidArgumentError(fmt::format("-h: {}", res.error().message()));
  size_t x = j.find('x');
  if (x == std::string::npos) {
    TORCHX_ASSIGN_OR_RETURN(int nnodes, ToInt(j, "-j"));
    if (res->gpu <= 0) {
      return InvalidArgumentError(
          fmt::format("-j: nproc_per_node cannot be inferred from GPU count. `{}` is not a GPU instance. You must "
                      "specify `-j $NNODESx$NPROCS_PER_NODE` (e.g. `-j {}x8`)",
                      h, nnodes));
    }
    return fmt::format("{}x{}", nnodes, res->gpu);
  }
  if (j.find('x', x + 1) != std::string::npos) {
    return InvalidArgumentError(
        fmt::format("-j: Invalid format for `-j $NNODESx$NPROCS_PER_NODE` (e.g. `-j 1x8`). Given: {}", j));
  }
  TORCHX_ASSIGN_OR_RETURN(int nnodes, ToInt(j.substr(0, x), "-j"));
  TORCHX_ASSIGN_OR_RETURN(int nproc, ToInt(j.substr(x + 1), "-j"));
  return fmt::format("{}x{}", nnodes, nproc);
}

Result<StructuredName> ParseStructuredName(const std::string& name, const std::string& m, const std::string& script) {
  if (m.empty() && script.empty()) {
    return InvalidArgumentError(
        "--name: No main module or script specified. Specify either a main module (-m) or a script path (--script)");
  }
  if (!m.empty() && !script.empty()) {
    return InvalidArgumentError(
        "--name: Both main module and script set. Specify exactly one of: main module or script, but not both");
  }
  std::string run, experiment;
  size_t slash = name.find('/');
  if (slash == std::string::npos) {
    run = name;
  } else if (slash + 1 < name.size()) {
    run = name.substr(slash + 1);
  }
  if (slash != std::string::npos && slash > 0) experiment = name.substr(0, slash);
  if (run.empty()) run = !m.empty() ? m.substr(m.rfind('.') + 1) : PathStem(script);
  return StructuredName{experiment.empty() ? "default-experiment" : experiment, run};
}

std::string PathStem(const std::string& path) {
  std::string base = path;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  base = base.substr(base.rfind('/') + 1);
  size_t dot = base.rfind('.');
  if (dot == std::string::npos || dot == 0 || base == "..") return base;
  return base.substr(0, dot);
}

namespace {

// dist.torchrun's parameters; dist.ddp, its deprecated alias, takes the same.
std::vector<Param> TorchrunParams() {
  return {kScript,
          kModule,
          WithDefault("image", ParamType::kStr, DefaultImage(), "image to run (e.g. a docker image)"),
          kName,
          OptionalNone("h", ParamType::kStr, "named resource for each node (wins over cpu, gpu, memMB)"),
          WithDefault("cpu", ParamType::kInt, 2, "CPUs per node"),
          WithDefault("gpu", ParamType::kInt, 0, "GPUs per node"),
          WithDefault("memMB", ParamType::kInt, 1024, "memory per node in MB"),
          WithDefault("j", ParamType::kStr, "1x2",
                      "[{min_nodes}:]{nodes}x{procs_per_node}; a bare {n} is n nodes x the GPUs of -h when -h is "
                      "given, else n processes on one node"),
          kEnv,
          kMetadata,
          kMaxRetries,
          WithDefault("rdzv_port", ParamType::kInt, 29500, "rendezvous port on the rank-0 host (multi-node only)"),
          WithDefault("rdzv_backend", ParamType::kStr, "c10d", "rendezvous backend (c10d, static, etcd...)"),
          OptionalNone("rdzv_conf", ParamType::kStr, "extra rendezvous config, e.g. join_timeout=600"),
          kMounts,
          kDebug,
          WithDefault("tee", ParamType::kInt, 3,
                      "streams torchrun tees to console and file: 0 none, 1 out, 2 err, 3 both")};
}

DdpOptions TorchrunOptions(const ComponentArgs& a) {
  DdpOptions o = CommonOptions(a);
  o.h = a.OptStr("h").value_or("");
  o.cpu = static_cast<int>(a.Int("cpu"));
  o.gpu = static_cast<int>(a.Int("gpu"));
  o.memMB = static_cast<int>(a.Int("memMB"));
  o.rdzv_port = static_cast<int>(a.Int("rdzv_port"));
  o.rdzv_backend = a.Str("rdzv_backend");
  o.rdzv_conf = a.OptStr("rdzv_conf");
  o.tee = static_cast<int>(a.Int("tee"));
  return o;
}

bool AllDigits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

}  // namespace

void AddDistComponents(std::vector<std::shared_ptr<const Component>>& out) {
  ComponentSpec torchrun{
      "dist.torchrun", "Distributed PyTorch app launched by torchrun: one role of N nodes, each running M workers.",
      "Launches the script or module with torchrun (c10d rendezvous on the rank-0 host's rdzv_port;\n"
      "a single-node job uses localhost:0, a free port). -j is [{min_nodes}:]{nodes}x{procs_per_node};\n"
      "a bare {n} is n nodes with one process per GPU of -h when -h is given, else n processes on one\n"
      "node. The named resource -h, when given, wins over --cpu/--gpu/--memMB.",
      TorchrunParams(), VarArgs("script_args", "arguments for the script or module")};
  out.push_back(std::make_shared<FunctionComponent>(
      std::move(torchrun), [](const ComponentArgs& a, const BuildContext& ctx) -> Result<specs::AppDef> {
        DdpOptions o = TorchrunOptions(a);
        if (!o.h.empty() && AllDigits(o.j)) {
          TORCHX_ASSIGN_OR_RETURN(o.j, ParseSpmdJ(o.h, o.j, ctx.named_resources));
        }
        return BuildDdp(std::move(o), ctx);
      }));

  ComponentSpec ddp{"dist.ddp",
                    "Distributed data parallel app (deprecated alias of dist.torchrun).",
                    "dist.torchrun with one difference kept: a bare -j {n} is always n processes on one node, even\n"
                    "with -h (write -j 1x{n} when moving to dist.torchrun).",
                    TorchrunParams(),
                    VarArgs("script_args", "arguments for the script or module"),
                    "[Deprecated] dist.ddp is deprecated; use dist.torchrun instead."};
  out.push_back(
      std::make_shared<FunctionComponent>(std::move(ddp), [](const ComponentArgs& a, const BuildContext& ctx) {
        return BuildDdp(TorchrunOptions(a), ctx);  // ParseNNodes reads a bare -j as processes on one node
      }));

  ComponentSpec spmd{
      "dist.spmd",
      "Single-program multiple-data app (deprecated alias of dist.torchrun with -h gpu.small, -j 1x1).",
      "Sized by host: -j {nodes} runs as many processes per node as host type -h has GPUs,\n"
      "-j {nodes}x{procs} sets them explicitly. Resources always come from -h.",
      {kScript, kModule, WithDefault("image", ParamType::kStr, DefaultImage(), "image to run (e.g. a docker image)"),
       kName, WithDefault("h", ParamType::kStr, "gpu.small", "named resource: the host type of each node"),
       WithDefault("j", ParamType::kStr, "1x1", "{nodes}x{procs_per_node}, or {nodes} (procs = GPUs of -h)"), kEnv,
       kMetadata, kMaxRetries, kMounts, kDebug},
      VarArgs("args", "arguments for the script or module"),
      "[Deprecated] dist.spmd is deprecated; use dist.torchrun instead."};
  out.push_back(std::make_shared<FunctionComponent>(
      std::move(spmd), [](const ComponentArgs& a, const BuildContext& ctx) -> Result<specs::AppDef> {
        DdpOptions o = CommonOptions(a);
        o.h = a.Str("h");
        TORCHX_ASSIGN_OR_RETURN(o.j, ParseSpmdJ(o.h, o.j, ctx.named_resources));
        return BuildDdp(std::move(o), ctx);
      }));
}

const std::map<std::string, std::string>& TorchDebugFlags() {
  static const auto* flags = new std::map<std::string, std::string>{
      {"CUDA_LAUNCH_BLOCKING", "1"},          // kernel errors at the call that caused them
      {"NCCL_DESYNC_DEBUG", "1"},             // which rank a collective hangs on
      {"TORCH_DISTRIBUTED_DEBUG", "DETAIL"},  // collective argument checks
      {"TORCH_SHOW_CPP_STACKTRACES", "1"},
  };
  return *flags;
}

}  // namespace torchx::components::internal
