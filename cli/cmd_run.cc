// `torchx run`: today it dry-runs an AppDef spec file (JSON or YAML); components and schedulers
// plug in here as they land.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "exit_codes.h"
#include "torchx/specs/app_def.h"
#include "torchx/specs/app_id.h"
#include "torchx/specs/macros.h"
#include "torchx/specs/serialize.h"

namespace torchx::cli {
namespace {

struct RunOptions {
  std::string scheduler = "local_cwd";
  bool dryrun = false;
  std::string spec;
};

// What each replica would run: the role with macros applied, as a local scheduler sees it.
std::string RenderReplicas(const specs::AppDef& app, const std::string& app_id) {
  std::string out;
  for (const specs::Role& role : app.roles) {
    for (int i = 0; i < role.num_replicas; ++i) {
      specs::macros::Values values{"", app_id, std::to_string(i), "TORCHX_RANK0_HOST"};
      specs::Role r = values.Apply(role);
      out += fmt::format("{}/{}:\n  entrypoint: {}\n  args: [", r.name, i, r.entrypoint);
      for (size_t a = 0; a < r.args.size(); ++a) out += (a ? ", " : "") + fmt::format("{:?}", r.args[a]);
      out += "]\n  env:\n";
      for (const auto& [k, v] : r.env) out += fmt::format("    {}={}\n", k, v);
    }
  }
  return out;
}

int Run(const RunOptions& opts) {
  auto app = specs::AppDefFromFile(opts.spec);
  if (!app) return ReportError(app.error());
  if (Status s = specs::ValidateAppDef(*app); !s.ok()) return ReportError(s.WithContext(opts.spec));
  if (!opts.dryrun) {
    return ReportError(UnimplementedError(fmt::format(
        "scheduler `{}` is not available in this build yet; use --dryrun", opts.scheduler)));
  }
  std::string app_id = specs::MakeUnique(app->name);
  std::printf("=== APPLICATION ===\n%s\n\n=== SCHEDULER REQUEST ===\n%s", specs::AppDefToJson(*app).c_str(),
              RenderReplicas(*app, app_id).c_str());
  return kExitOk;
}

}  // namespace

Handler AddRunCommand(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Run a job (today: dry-run an AppDef spec file)");
  cmd->add_option("-s,--scheduler", opts->scheduler, "Scheduler to run on")->capture_default_str();
  cmd->add_flag("--dryrun", opts->dryrun, "Print what would be submitted and exit");
  cmd->add_option("spec", opts->spec, "AppDef spec file (.json, .yaml)")->required();
  return [opts] { return Run(*opts); };
}

}  // namespace torchx::cli
