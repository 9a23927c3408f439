// `torchx describe HANDLE [--json] [--native]`: the AppDef the app was submitted with (a pipeline
// or a sweep: its file), or (--native) the request as the engine now holds it
// (TorchX's describe_native): its text, or with --json the back-end's structured form.
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "core/json_yaml.h"
#include "exit_codes.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/serialize.h"

namespace torchx::cli {
namespace {

// A composite app (a pipeline) as the file that runs it: its steps with their AppDefs, the steps
// each depends on, their schedulers and options. `torchx pipeline run` takes it back.
std::string CompositeDefinition(const std::string& name, const std::vector<schedulers::MemberApp>& members, bool json) {
  nlohmann::ordered_json steps = nlohmann::ordered_json::object();
  for (const schedulers::MemberApp& m : members) {
    nlohmann::ordered_json step = nlohmann::ordered_json::object();
    if (m.app) step["app"] = nlohmann::ordered_json::parse(specs::AppDefToJson(*m.app));
    if (!m.depends_on.empty()) step["depends_on"] = m.depends_on;
    step["scheduler"] = m.scheduler;
    auto cfg = nlohmann::ordered_json::parse(m.cfg_json.empty() ? "{}" : m.cfg_json, nullptr, false);
    if (cfg.is_object() && !cfg.empty()) step["cfg"] = std::move(cfg);
    steps[m.name] = std::move(step);
  }
  nlohmann::ordered_json def = {{"name", name}, {"steps", std::move(steps)}};
  if (json) return def.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  return internal::JsonToYaml(def);
}

}  // namespace

Handler AddDescribeCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  struct Opts {
    std::string handle;
    bool json = false;
    bool native = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("describe", "Show the AppDef an app was submitted with");
  cmd->add_option("app_handle", o->handle, "scheduler://session/app_id")->required();
  cmd->add_flag("--json", o->json, "Print JSON (the default output is YAML)");
  cmd->add_flag("--native", o->native,
                "Print the request as the engine now holds it (the supervisor's plan, the Slurm job and its batch "
                "script, the Volcano Job, the containers' create bodies)");
  return [o, &registry] {
    runner::Runner runner(registry, ReaderRunnerOptions());
    if (o->native) {
      auto native = runner.DescribeNative(o->handle);
      if (!native) return ReportError(native.error());
      if (!*native) {
        ReportError(AppNotFound(o->handle));
        return kExitFailure;
      }
      std::string out = o->json ? (*native)->payload : (*native)->request;
      if (out.empty() || out.back() != '\n') out += '\n';
      std::fputs(out.c_str(), stdout);
      return kExitOk;
    }
    // A composite kind's own definition (a sweep's file, a managed job and its attempts), where it
    // has one; else the AppDef and the members below.
    if (auto def = runner.CompositeDefinition(o->handle, o->json); !def) {
      return ReportError(def.error());
    } else if (*def) {
      std::fputs((*def)->c_str(), stdout);
      return kExitOk;
    }
    auto described = runner.Describe(o->handle);
    if (!described) return ReportError(described.error());
    if (!*described) {
      ReportError(AppNotFound(o->handle));
      return kExitFailure;
    }
    auto members = runner.Members(o->handle);
    if (!members) return ReportError(members.error());
    std::string out;
    if (*members && !(*members)->empty()) {
      out = CompositeDefinition((*described)->name, **members, o->json);
    } else {
      out = o->json ? specs::AppDefToJson(**described) + "\n" : specs::AppDefToYaml(**described);
    }
    std::fputs(out.c_str(), stdout);
    return kExitOk;
  };
}

}  // namespace torchx::cli
