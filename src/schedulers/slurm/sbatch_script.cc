#include "schedulers/slurm/sbatch_script.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <re2/re2.h>

#include "core/pystr.h"
#include "torchx/specs/macros.h"
#include "torchx/version.h"

namespace torchx::schedulers::slurm {
namespace {

// One shell word. `${app_id}` becomes the job id at run time: the word is quoted with the macro
// text in it, then the macro is replaced by a double-quoted $SLURM_JOB_ID between the single
// quotes ('a-'"$SLURM_JOB_ID"'-b'), so everything else stays literal.
std::string ShellWord(const std::string& s) {
  std::string quoted = internal::ShlexQuote(s);
  const std::string macro(specs::macros::kAppId);
  for (size_t pos = 0; (pos = quoted.find(macro, pos)) != std::string::npos;) {
    quoted.replace(pos, macro.size(), "'\"$SLURM_JOB_ID\"'");
    pos += 17;
  }
  // sbatch refuses a script holding "\r\n" (it takes it for a DOS file), so a carriage return
  // leaves the single quotes as bash's $'\r'.
  for (size_t pos = 0; (pos = quoted.find('\r', pos)) != std::string::npos;) {
    quoted.replace(pos, 1, "'$'\\r''");
    pos += 7;
  }
  return quoted;
}

}  // namespace

std::optional<SlurmVersion> ParseSlurmVersion(const std::string& text) {
  static const re2::RE2 kVersion(R"((\d+)\.(\d+))");
  int major = 0, minor = 0;  // RE2 refuses a number that does not fit: no version then
  if (!re2::RE2::PartialMatch(text, kVersion, &major, &minor)) return std::nullopt;
  return SlurmVersion{major, minor};
}

specs::RunOpts SlurmRunOpts() {
  specs::RunOpts o;
  (void)o.Add("partition", specs::CfgType::kStr, "The partition to run the job in.");
  (void)o.Add("time", specs::CfgType::kStr,
              "The maximum time the job is allowed to run for. Formats: \"minutes\", \"minutes:seconds\", "
              "\"hours:minutes:seconds\", \"days-hours\", \"days-hours:minutes\" or \"days-hours:minutes:seconds\"");
  (void)o.Add("comment", specs::CfgType::kStr, "Comment to set on the slurm job.");
  (void)o.Add("constraint", specs::CfgType::kStr, "Constraint to use for the slurm job.");
  (void)o.Add("mail-user", specs::CfgType::kStr, "User to mail on job end.");
  (void)o.Add("mail-type", specs::CfgType::kStr, "What events to mail users on.");
  (void)o.Add("job_dir", specs::CfgType::kStr,
              "The directory to place the job code and outputs. The directory must not exist and will be "
              "created. To enable log iteration, jobs will be tracked in ``.torchxslurmjobdirs``.");
  (void)o.Add("qos", specs::CfgType::kStr, "Quality of Service (QoS) to assign to the job.");
  (void)o.Add("account", specs::CfgType::kStr, "The account to charge the job to (sbatch --account).");
  (void)o.Add("dependency", specs::CfgType::kStr,
              "Start the job only once these jobs have ended as said (sbatch --dependency, e.g. afterok:123:124); "
              "the job is cancelled when its dependency can no longer be met (--kill-on-invalid-dep=yes). "
              "Pipelines set it from each step's depends_on.");
  (void)o.Add("nomem", specs::CfgType::kBool,
              "do not request memory (--mem) for the replicas, for clusters that do not schedule on memory", false);
  (void)o.Add("requeue", specs::CfgType::kBool,
              "let Slurm requeue the job after a node failure or a preemption (sbatch --requeue), and a retry "
              "(max_retries) requeue it; false: --no-requeue, the job ends NODE_FAIL / PREEMPTED and a managed job "
              "recovers it with a new submission (roles must then have max_retries=0)",
              true);
  (void)o.Add("workspace_type", specs::CfgType::kStr,
              "which workspace builder patches the image: one of dir, docker (docker: every replica runs inside its "
              "role's image through the cluster's container plugin, srun --container-image)",
              std::string("dir"));
  (void)o.Add("image_repo", specs::CfgType::kStr,
              "(workspace_type=docker) the repository a --workspace image is pushed to (push access needed) and the "
              "nodes' container plugin pulls from, e.g. registry.example.com/team/trainer");
  (void)o.Add("quiet", specs::CfgType::kBool,
              "(workspace_type=docker) whether to suppress verbose output for image building (the engine's build "
              "log on stderr)",
              false);
  (void)o.Add("status_interval", specs::CfgType::kFloat,
              "seconds an answer about the queue is reused: every reader of job states on this host (status, wait, "
              "list, the dashboard, drivers) shares one squeue of all the user's jobs per interval. Read from "
              ".torchxconfig's [slurm] section by every command",
              2.0);
  return o;
}

Result<std::string> AfterOkDependency(std::string_view given, const std::vector<std::string>& job_ids) {
  if (job_ids.empty()) return std::string(given);
  for (const std::string& id : job_ids) {
    if (id.empty() || id.find_first_of(":,?") != std::string::npos) {
      return InvalidArgumentError(fmt::format("slurm: `{}` is not a Slurm job id to depend on", id));
    }
  }
  if (given.find('?') != std::string_view::npos) {
    return InvalidArgumentError(fmt::format(
        "slurm: option `dependency` ('{}') joins its parts with '?' (any of); the pipeline's afterok needs all of "
        "them (','), and Slurm refuses a dependency that mixes both",
        given));
  }
  std::string afterok = fmt::format("afterok:{}", fmt::join(job_ids, ":"));
  return given.empty() ? afterok : fmt::format("{},{}", given, afterok);
}

std::string SubmissionTag(std::string_view key) { return fmt::format("torchx:{}", key); }

void TagSubmission(std::vector<std::string>& cmd, std::string_view key) {
  const std::string tag = SubmissionTag(key);
  for (std::string& arg : cmd) {
    if (arg.starts_with("--comment=")) {
      arg += (arg.size() > 10 ? " " : "") + tag;
      return;
    }
  }
  cmd.insert(cmd.begin() + std::min<size_t>(cmd.size(), 2), "--comment=" + tag);  // after `sbatch --parsable`
}

std::optional<std::string> JobWithSubmissionTag(std::string_view text, std::string_view key) {
  const std::string tag = SubmissionTag(key);
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    size_t bar = line.find('|');
    if (bar == std::string_view::npos) continue;
    std::string_view comment = line.substr(bar + 1);
    // The tag as a word of the comment: the user's own text before it, nothing glued to it.
    for (size_t at = comment.find(tag); at != std::string_view::npos; at = comment.find(tag, at + 1)) {
      bool starts = at == 0 || comment[at - 1] == ' ';
      bool ends =
          at + tag.size() == comment.size() || comment[at + tag.size()] == ' ' || comment[at + tag.size()] == '\r';
      if (starts && ends) {
        std::string_view id = line.substr(0, std::min(bar, line.find('+')));
        return std::string(id);
      }
    }
  }
  return std::nullopt;
}

std::optional<double> ParseMinJobAge(std::string_view config) {
  size_t at = config.find("MinJobAge");
  if (at == std::string_view::npos) return std::nullopt;
  size_t eq = config.find('=', at);
  size_t eol = config.find('\n', at);
  if (eq == std::string_view::npos || eq > eol) return std::nullopt;
  std::string_view value = config.substr(eq + 1, eol == std::string_view::npos ? eol : eol - eq - 1);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  double seconds = 0;
  size_t digits = 0;
  while (digits < value.size() && value[digits] >= '0' && value[digits] <= '9') {
    seconds = seconds * 10 + (value[digits] - '0');
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return seconds;
}

SlurmOptions SlurmOptions::From(const specs::ResolvedCfg& cfg) {
  SlurmOptions o;
  o.partition = cfg.Str("partition").value_or("");
  o.time = cfg.Str("time").value_or("");
  o.comment = cfg.Str("comment").value_or("");
  o.constraint = cfg.Str("constraint").value_or("");
  o.mail_user = cfg.Str("mail-user").value_or("");
  o.mail_type = cfg.Str("mail-type").value_or("");
  o.job_dir = cfg.Str("job_dir").value_or("");
  o.qos = cfg.Str("qos").value_or("");
  o.account = cfg.Str("account").value_or("");
  o.dependency = cfg.Str("dependency").value_or("");
  o.nomem = cfg.Bool("nomem").value();      // declared with a default
  o.requeue = cfg.Bool("requeue").value();  // declared with a default
  o.workspace_type = cfg.Str("workspace_type").value_or("dir");
  return o;
}

Result<SlurmBatchRequest> BuildSlurmRequest(const specs::AppDef& app, const SlurmOptions& options, SlurmVersion version,
                                            std::optional<int> partition_mem_mb) {
  if (options.workspace_type != "dir" && options.workspace_type != "docker") {
    return InvalidArgumentError(
        fmt::format("slurm: unknown workspace_type `{}`; this scheduler offers: dir, docker", options.workspace_type));
  }
  const bool containerized = options.workspace_type == "docker";
  SlurmBatchRequest req;
  req.cmd = {"sbatch", "--parsable"};
  for (const auto& [flag, value] : {std::pair{"comment", &options.comment},
                                    {"mail-user", &options.mail_user},
                                    {"mail-type", &options.mail_type},
                                    {"account", &options.account}}) {
    if (!value->empty()) req.cmd.push_back(fmt::format("--{}={}", flag, *value));
  }
  if (!options.dependency.empty()) {
    // A dependency that can never be met (a failed afterok job) would otherwise leave the job
    // pending forever; Slurm cancels it instead (reason DependencyNeverSatisfied).
    req.cmd.push_back("--dependency=" + options.dependency);
    req.cmd.push_back("--kill-on-invalid-dep=yes");
  }
  req.job_dir = options.job_dir;
  bool nomem = options.nomem || (partition_mem_mb && *partition_mem_mb <= 1000);
  int max_retries = -1;
  for (const specs::Role& role : app.roles) {
    max_retries = max_retries < 0 ? role.max_retries : std::min(max_retries, role.max_retries);
    if (!options.requeue && role.max_retries > 0) {
      // A retry is a requeue (scontrol requeue), which --no-requeue disables.
      return InvalidArgumentError(fmt::format(
          "slurm: role {}: max_retries={} needs requeue=true (a retry is a requeue), and this job has requeue=false "
          "(a managed job always does: its driver, not Slurm, recovers it); set max_retries=0, and for a managed job "
          "--recover_on user_error --max_recoveries N",
          role.name, role.max_retries));
    }
    for (int i = 0; i < role.num_replicas; ++i) {
      // In a container the image is where the process runs, not a directory on the node.
      std::string image = containerized ? "" : role.image.empty() && !req.job_dir.empty() ? req.job_dir : role.image;
      specs::macros::Values values{image, std::string(specs::macros::kAppId), std::to_string(i),
                                   "SLURM_JOB_NODELIST_HET_GROUP_0"};
      specs::Role r = values.Apply(role);
      SlurmReplicaRequest rep;
      rep.name = fmt::format("{}-{}", role.name, i);
      rep.sbatch_opts = {"--job-name=" + rep.name, options.requeue ? "--requeue" : "--no-requeue",
                         "--ntasks-per-node=1"};
      const specs::Resource& res = role.resource;
      if (res.cpu > 0) rep.sbatch_opts.push_back(fmt::format("--cpus-per-task={}", res.cpu));
      if (res.memMB > 0 && !nomem) rep.sbatch_opts.push_back(fmt::format("--mem={}", res.memMB));
      if (res.gpu > 0) {
        if (version >= SlurmVersion{24, 11}) {
          rep.sbatch_opts.push_back(fmt::format("--gpus-per-node={}", res.gpu));
        } else {
          rep.sbatch_opts.push_back(fmt::format("--gpus-per-task={}", res.gpu));
          rep.sbatch_opts.push_back("--ntasks=1");
        }
      }
      for (const auto& [flag, value] : {std::pair{"partition", &options.partition},
                                        {"time", &options.time},
                                        {"constraint", &options.constraint},
                                        {"qos", &options.qos}}) {
        if (!value->empty()) rep.sbatch_opts.push_back(fmt::format("--{}={}", flag, *value));
      }
      rep.srun_opts = {fmt::format("--output=slurm-\"$SLURM_JOB_ID\"-{}.out", rep.name),
                       fmt::format("--error=slurm-\"$SLURM_JOB_ID\"-{}.err", rep.name), "--wait=60",
                       "--kill-on-bad-exit=1"};
      if (containerized) {
        if (role.image.empty()) {
          return InvalidArgumentError(fmt::format(
              "slurm: role {}: workspace_type=docker runs each replica in its role's image; set the role's image",
              role.name));
        }
        rep.srun_opts.push_back("--container-image=" + ShellWord(role.image));
      }
      // The environment goes through `env` rather than srun's --export=ALL,K=V (which splits on
      // commas and cannot quote), so that every value reaches the process byte for byte.
      if (!r.env.empty()) {
        rep.command = {"env", "--"};
        for (const auto& [k, v] : r.env) rep.command.push_back(ShellWord(k + "=" + v));
      }
      rep.command.push_back(ShellWord(r.entrypoint));
      for (const std::string& a : r.args) rep.command.push_back(ShellWord(a));
      req.replicas.push_back(std::move(rep));
    }
  }
  req.max_retries = std::max(0, max_retries);
  if (req.replicas.empty()) return InvalidArgumentError("roles: a slurm job needs at least one replica");
  return req;
}

namespace {

// What runs after the srun line(s): the exit code, and a requeue while retries are left.
std::string ExitAndRetry(const std::string& job) {
  std::string out = "exitcode=$?\nset -e\n\n";
  out += "echo \"job exited with code $exitcode\"\n";
  out += "if [ $exitcode -ne 0 ]; then\n";
  out += "    if [ \"$TORCHX_MAX_RETRIES\" -gt \"${SLURM_RESTART_COUNT:-0}\" ]; then\n";
  out += fmt::format("        scontrol requeue {}\n", job);
  out += "    fi\n";
  out += "    exit $exitcode\n";
  out += "fi\n";
  return out;
}

std::string Preamble(const std::vector<std::string>& cmd) {
  std::string out = "#!/bin/bash\n#\n";
  out += fmt::format("# Generated by TorchX {} (C++)\n", TORCHX_VERSION_STRING);
  out += fmt::format("# Run with: {}\n#\n", fmt::join(cmd, " "));
  return out;
}

std::string Environment(int max_retries) {
  std::string out = "\nset -evx\n\n";
  out += "export PYTHONUNBUFFERED=1\nexport SLURM_UNBUFFEREDIO=1\n";
  out += fmt::format("export TORCHX_MAX_RETRIES={}\n\n", max_retries);
  return out;
}

// A single job's script names its job `"$SLURM_JOB_ID"` (ShellWord's `${app_id}`, the log files);
// an array task's is `<array job>_<task>`. (An argument that is literally `"$SLURM_JOB_ID"`,
// quotes included, is the same text and is taken to mean the job too.)
std::string AsArrayTask(std::string word) {
  static const std::string kJob = "\"$SLURM_JOB_ID\"";
  static const std::string kTask = "\"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"";
  for (size_t pos = 0; (pos = word.find(kJob, pos)) != std::string::npos; pos += kTask.size()) {
    word.replace(pos, kJob.size(), kTask);
  }
  return word;
}

}  // namespace

std::string SlurmBatchRequest::Materialize() const {
  std::string out = Preamble(cmd);
  for (size_t i = 0; i < replicas.size(); ++i) {
    if (i) out += "#SBATCH hetjob\n";
    out += fmt::format("#SBATCH {}\n", fmt::join(replicas[i].sbatch_opts, " "));
  }
  out += Environment(max_retries);
  out += "set +e\n";
  for (size_t i = 0; i < replicas.size(); ++i) {
    const auto& r = replicas[i];
    out += i ? "     " : "srun ";
    out += fmt::format("{} {}", fmt::join(r.srun_opts, " "), fmt::join(r.command, " "));
    out += i + 1 < replicas.size() ? " :\\\n" : "\n";
  }
  out += ExitAndRetry("\"$SLURM_JOB_ID\"");
  return out;
}

Result<SlurmArrayRequest> BuildSlurmArray(const std::vector<SlurmBatchRequest>& tasks, int max_parallel) {
  if (tasks.empty()) return InvalidArgumentError("slurm: an array job needs at least one task");
  const SlurmBatchRequest& first = tasks.front();
  SlurmArrayRequest array;
  array.first = first;
  array.max_parallel = max_parallel;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const SlurmBatchRequest& t = tasks[i];
    auto refuse = [i](std::string_view why) {
      return InvalidArgumentError(fmt::format("slurm: task {} cannot join task 0's job array: {}", i, why));
    };
    if (t.replicas.size() != 1)
      return refuse(fmt::format("it has {} replicas (an array task has one)", t.replicas.size()));
    if (t.cmd != first.cmd) return refuse(fmt::format("its sbatch flags differ ({})", fmt::join(t.cmd, " ")));
    if (t.replicas[0].sbatch_opts != first.replicas[0].sbatch_opts) {
      return refuse(fmt::format("its #SBATCH options differ ({})", fmt::join(t.replicas[0].sbatch_opts, " ")));
    }
    if (t.job_dir != first.job_dir || t.workspace != first.workspace || t.push != first.push) {
      return refuse("its job_dir or workspace differs");
    }
    if (t.max_retries != first.max_retries) return refuse("its max_retries differs");
    array.tasks.push_back(t.replicas[0]);
  }
  return array;
}

std::string SlurmArrayRequest::Materialize() const {
  std::string out = Preamble(first.cmd);
  std::string range = fmt::format("0-{}", tasks.size() - 1);
  if (max_parallel > 0) range += fmt::format("%{}", max_parallel);
  out += fmt::format("#SBATCH --array={} {}\n", range, fmt::join(first.replicas[0].sbatch_opts, " "));
  out += Environment(first.max_retries);
  out += "set +e\n";
  out += "case \"$SLURM_ARRAY_TASK_ID\" in\n";
  for (size_t i = 0; i < tasks.size(); ++i) {
    std::vector<std::string> words;
    for (const std::string& w : tasks[i].srun_opts) words.push_back(AsArrayTask(w));
    for (const std::string& w : tasks[i].command) words.push_back(AsArrayTask(w));
    out += fmt::format("{}) srun {} ;;\n", i, fmt::join(words, " "));
  }
  out += "*) echo \"no task $SLURM_ARRAY_TASK_ID in this array\" >&2; false ;;\n";
  out += "esac\n";
  out += ExitAndRetry("\"$SLURM_JOB_ID\"");
  return out;
}

}  // namespace torchx::schedulers::slurm
