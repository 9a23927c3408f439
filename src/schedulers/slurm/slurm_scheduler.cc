#include "schedulers/slurm/slurm_scheduler.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "container_engine/workspace_image.h"
#include "core/helper_exe.h"
#include "core/subprocess.h"
#include "schedulers/slurm/helpers.h"
#include "schedulers/slurm/log_files.h"
#include "schedulers/slurm/queue_reader.h"
#include "schedulers/slurm/sbatch_script.h"
#include "schedulers/slurm/slurm_hosts.h"
#include "schedulers/slurm/slurm_status.h"
#include "schedulers/slurm/slurm_usage.h"
#include "schedulers/slurm/workspace.h"

namespace torchx::schedulers::slurm {
namespace {

namespace fs = std::filesystem;

constexpr const char* kJobDirsFile = ".torchxslurmjobdirs";

// Where a job's files are: its job_dir (recorded at submit in ./.torchxslurmjobdirs), else cwd.
fs::path JobDir(const std::string& app_id) {
  std::ifstream f(kJobDirsFile);
  std::string line;
  fs::path found;
  std::string job = app_id.substr(0, app_id.find('_'));  // an array task's job_dir is its array's
  while (std::getline(f, line)) {
    size_t eq = line.find(" = ");
    if (eq != std::string::npos && line.substr(0, eq) == job) found = line.substr(eq + 3);
  }
  std::error_code ec;
  return found.empty() ? fs::current_path(ec) : found;
}

class SlurmScheduler : public Scheduler {
 public:
  SlurmScheduler(std::string session, std::shared_ptr<internal::CommandRunner> tools,
                 std::shared_ptr<const Clock> clock, std::shared_ptr<internal::HttpClient> engine_http,
                 const QueueReading& reading)
      : Scheduler("slurm", std::move(session)),
        tools_(std::move(tools)),
        clock_(std::move(clock)),
        engine_http_(std::move(engine_http)),
        reader_(tools_, reading.store ? reading.store : MakeMemorySnapshotStore(), clock_, reading.refresh_interval) {}

  specs::RunOpts run_opts() const override { return SlurmRunOpts(); }
  // Its state is in its engine (or on disk): a thread may have an instance of its own.
  bool instance_per_thread() const override { return true; }
  Capabilities capabilities() const override {
    return {Capability::kLogs,
            Capability::kFollowLogs,
            Capability::kList,
            Capability::kNativeDependencies,
            Capability::kDescribeNative,
            Capability::kResourceUsage,
            Capability::kWorkspace,
            Capability::kNativeArrays,
            Capability::kFailureClassification,
            Capability::kFindsSubmission,
            Capability::kStacks,
            Capability::kHosts};
  }
  // --no-requeue: a node failure or preemption ends the job (NODE_FAIL, PREEMPTED) for the caller
  // to recover, instead of Slurm requeueing it under the same id.
  Result<specs::Cfg> RecoveryHandoverCfg(specs::Cfg cfg) const override {
    cfg["requeue"] = false;
    return cfg;
  }
  Result<std::string> Helper(std::string_view function, std::string_view args_json) override {
    return SlurmHelper(function, args_json);
  }
  // afterok on every id, with --kill-on-invalid-dep=yes (sbatch_script.cc): Slurm cancels the job
  // once a dependency fails.
  Result<specs::Cfg> DependencyCfg(const std::vector<std::string>& after_app_ids, specs::Cfg cfg) const override {
    std::string given;
    if (auto it = cfg.find("dependency"); it != cfg.end()) {
      if (const auto* text = std::get_if<std::string>(&it->second)) {
        given = *text;
      } else if (!std::holds_alternative<std::monostate>(it->second)) {
        return InvalidArgumentError("slurm: option `dependency` must be a string");
      }
    }
    TORCHX_ASSIGN_OR_RETURN(cfg["dependency"], AfterOkDependency(given, after_app_ids));
    return cfg;
  }

  Result<std::string> Schedule(const DryRunInfo& info) override {
    // The payload is the structured request (Python's SlurmBatchRequest may have edited it).
    TORCHX_ASSIGN_OR_RETURN(SlurmBatchRequest req, SlurmBatchRequestFromJson(info.payload));
    // Tagged with the caller's key in its comment, so that a caller that dies before it learns
    // the job's id finds the job by it (FindSubmission).
    if (!info.submission_key.empty()) TagSubmission(req.cmd, info.submission_key);
    TORCHX_ASSIGN_OR_RETURN(std::string id, Submit(req, req.Materialize()));
    reader_.Touched(id);
    return id;
  }

  // Every job squeue still lists (pending, running, or ended less than MinJobAge ago) of this
  // user, hidden partitions included (-a), by the key's tag in its comment.
  Result<std::optional<std::string>> FindSubmission(const std::string& key) override {
    TORCHX_ASSIGN_OR_RETURN(auto res,
                            Tool({"squeue", "-h", "-a", "-t", "all", "--me", "-o", "%i|%k"}, std::chrono::seconds(60)));
    if (res.exit_code != 0) return UnavailableError(fmt::format("slurm: squeue: {}", Trim(res.err)));
    return JobWithSubmissionTag(res.out, key);
  }

  // MinJobAge: how long the controller keeps an ended job where squeue lists it.
  Result<double> FindableForSeconds() override {
    TORCHX_ASSIGN_OR_RETURN(auto res, Tool({"scontrol", "show", "config"}, std::chrono::seconds(30)));
    if (res.exit_code != 0) return UnavailableError(fmt::format("slurm: scontrol show config: {}", Trim(res.err)));
    return ParseMinJobAge(res.out).value_or(0);
  }

  // One sbatch for every task: each task's own job `<id>_<i>`.
  Result<std::vector<std::string>> ScheduleArray(const std::vector<DryRunInfo>& tasks, int max_parallel) override {
    std::vector<SlurmBatchRequest> requests;
    requests.reserve(tasks.size());
    for (const DryRunInfo& t : tasks) {
      TORCHX_ASSIGN_OR_RETURN(SlurmBatchRequest req, SlurmBatchRequestFromJson(t.payload));
      requests.push_back(std::move(req));
    }
    TORCHX_ASSIGN_OR_RETURN(SlurmArrayRequest array, BuildSlurmArray(requests, max_parallel));
    auto id = Submit(array.first, array.Materialize());
    if (!id && id.error().message().find("array") != std::string::npos) {
      // The cluster refuses this array (more tasks than its MaxArraySize, arrays disabled): the
      // caller submits the tasks one by one instead.
      return InvalidArgumentError(
          fmt::format("slurm: the cluster refused a job array of {} tasks: {}", tasks.size(), id.error().message()));
    }
    if (!id) return id.error();
    reader_.Touched(*id);
    std::vector<std::string> ids;
    ids.reserve(tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i) ids.push_back(fmt::format("{}_{}", *id, i));
    return ids;
  }

  // TorchX's two Slurm workspaces (nightly's MultiWorkspaceMixin), by workspace_type:
  // - dir: the workspace is what Schedule copies into job_dir (with no job_dir the job runs in the
  //   submitting directory, as TorchX does);
  // - docker: each role's image is rebuilt with the workspace by the local container engine and
  //   tagged <image_repo>:<image id>; Schedule pushes it, and srun runs each replica in it
  //   (--container-image). A dry run builds but does not push.
  Status BuildWorkspace(const std::string& workspace, specs::AppDef& app, const specs::ResolvedCfg& cfg) override {
    std::string type = cfg.Str("workspace_type").value_or("dir");
    if (type == "dir") {
      std::error_code ec;
      workspace_dir_ = fs::absolute(workspace, ec).string();
      return OkStatus();
    }
    if (type != "docker") {
      return InvalidArgumentError(
          fmt::format("slurm: unknown workspace_type `{}`; this scheduler offers: dir, docker", type));
    }
    std::string repo = cfg.Str("image_repo").value_or("");
    TORCHX_RETURN_IF_ERROR(container_engine::CheckImageRepo(repo, "image_repo", "slurm"));
    TORCHX_ASSIGN_OR_RETURN(auto built, container_engine::BuildWorkspaceImagesFor(
                                            Engine(), workspace, repo, app, "slurm",
                                            container_engine::BuildLogFor(cfg.Bool("quiet").value_or(false))));
    workspace_images_.insert(built.begin(), built.end());
    return OkStatus();
  }

  // The job as slurmctld holds it: `scontrol show job` (every field, the resolved ones included) and
  // the batch script it runs. Payload: {"job": {field: value}, "batch_script": text}. A job the
  // controller has forgotten (past MinJobAge) is not described natively: nullopt, as for an
  // unknown one.
  Result<std::optional<DryRunInfo>> DescribeNative(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(auto show, Tool({"scontrol", "show", "job", "-o", app_id}, std::chrono::seconds(60)));
    if (show.exit_code != 0) {
      if (show.err.find("Invalid job id") != std::string::npos) return std::optional<DryRunInfo>();
      return UnavailableError(fmt::format("slurm: scontrol show job {}: {}", app_id, Trim(show.err)));
    }
    TORCHX_ASSIGN_OR_RETURN(auto fields, ParseScontrolJob(show.out));
    nlohmann::json job = nlohmann::json::object();
    for (const auto& [key, value] : fields) job[key] = value;
    std::string script;
    auto batch = Tool({"scontrol", "write", "batch_script", app_id, "-"}, std::chrono::seconds(60));
    if (batch && batch->exit_code == 0) script = batch->out;  // gone once the job ended on some versions
    DryRunInfo info;
    info.app_id = app_id;
    info.request = fmt::format("scontrol show job {}\n{}\n\n{}", app_id, Trim(show.out),
                               script.empty() ? "(the batch script is no longer held by slurmctld)" : script);
    info.payload = nlohmann::json{{"job", std::move(job)}, {"batch_script", script}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
    return std::optional<DryRunInfo>(std::move(info));
  }

  // The queue's rows while slurmctld remembers the job, accounting's after (QueueReader).
  Result<std::optional<DescribeAppResponse>> Describe(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(JobRows rows, reader_.Rows(app_id));
    auto d = DescribeFromJobs(app_id, rows.jobs);
    if (!rows.controller_error) return d;
    // Not "no such app" while the controller cannot say: that would tell `wait` the app is gone.
    if (!d) return UnavailableError(fmt::format("slurm: squeue: {}", *rows.controller_error));
    d->msg = fmt::format("the Slurm controller cannot be reached ({}): state from accounting, which may lag",
                         *rows.controller_error);
    return d;
  }

  // The components' states (squeue while the controller remembers the job, accounting after):
  // ClassifySlurmJobs.
  Result<std::optional<FailureReport>> ClassifyFailure(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(JobRows rows, reader_.Rows(app_id));
    if (rows.jobs.empty() && rows.controller_error) {
      return UnavailableError(fmt::format("slurm: squeue: {}", *rows.controller_error));
    }
    const std::vector<SlurmJob>& mine = rows.jobs;
    auto d = DescribeFromJobs(app_id, mine);
    if (!d) return std::optional<FailureReport>();
    if (!specs::IsTerminal(d->state) || d->state == specs::AppState::kSucceeded) {
      return FailedPreconditionError(
          fmt::format("slurm: job {} is {}: it has no failure cause", app_id, specs::AppStateName(d->state)));
    }
    if (auto report = ClassifySlurmJobs(mine)) return std::optional(std::move(*report));
    return std::optional(FailureReport{FailureCause::kUnknown, d->msg});
  }

  // What slurmd gathered for the running replicas, read now: `sstat` for every component's steps
  // and `squeue --steps` for when they started. Slurm keeps no series, so one sample per replica;
  // a job that has not started or has ended has none, and says why.
  Result<std::optional<AppUsage>> ResourceUsage(const std::string& app_id, const UsageOptions&) override {
    TORCHX_ASSIGN_OR_RETURN(JobRows rows, reader_.Rows(app_id));
    std::optional<DescribeAppResponse> d = DescribeFromJobs(app_id, rows.jobs);
    if (!d) {
      if (rows.controller_error) return UnavailableError(fmt::format("slurm: squeue: {}", *rows.controller_error));
      return std::optional<AppUsage>();
    }
    // sstat asks for the queue's component ids: accounting's rows are of an ended job.
    std::vector<SlurmJob> mine;
    if (rows.source == JobRows::Source::kQueue) mine = std::move(rows.jobs);
    if (mine.empty() || specs::IsTerminal(d->state)) {
      AppUsage ended;
      for (const auto& role : d->roles_statuses) {
        for (const auto& r : role.replicas) ended.replicas.push_back(ReplicaUsage{r.role, r.id, r.hostname, {}});
      }
      ended.note = fmt::format(
          "slurm: the job is {}: sstat has figures only while its steps run (sacct -j {} keeps "
          "the totals where the cluster has accounting)",
          specs::AppStateName(d->state), app_id);
      return std::optional(std::move(ended));
    }
    std::vector<std::string> running;
    for (const SlurmJob& j : mine) {
      if (SlurmStateToAppState(j.state) == specs::AppState::kRunning) running.push_back(j.raw_id);
    }
    std::vector<StepUsage> steps;
    std::map<std::string, double, std::less<>> starts;
    std::string why;
    if (!running.empty()) {
      std::string ids = fmt::format("{}", fmt::join(running, ","));
      TORCHX_ASSIGN_OR_RETURN(auto sstat, Tool({"sstat", "-a", "-n", "--noconvert", "--parsable2", "-o",
                                                std::string(kSstatFields), "-j", ids},
                                               std::chrono::seconds(30)));
      if (sstat.exit_code != 0) return UnavailableError(fmt::format("slurm: sstat: {}", Trim(sstat.err)));
      TORCHX_ASSIGN_OR_RETURN(steps, ParseSstat(sstat.out));
      if (steps.empty()) why = Trim(sstat.err);  // "No steps running for job N", jobacct_gather/none
      auto step_rows =
          Tool({"squeue", "--steps", "-h", "-j", ids, "-O", std::string(kSqueueStepFormat)}, std::chrono::seconds(30));
      if (step_rows && step_rows->exit_code == 0) starts = ParseStepStarts(step_rows->out);
    }
    AppUsage usage = UsageFromSteps(mine, steps, starts, clock_->EpochSeconds());
    if (running.empty()) {
      usage.note = "slurm: no replica is running yet: sstat has figures once the job's steps start";
    } else if (steps.empty()) {
      usage.note = fmt::format("slurm: sstat has no figures for the job's steps{}{} (is JobAcctGatherType set?)",
                               why.empty() ? "" : ": ", why);
    } else {
      usage.note =
          "slurm: sstat's figures as of slurmd's last gather (JobAcctGatherFrequency); CPU % is the average "
          "since each replica's step started";
    }
    bool any_gpu = false;
    for (const auto& r : usage.replicas) {
      for (const auto& sample : r.samples) any_gpu |= !sample.gpus.empty();
    }
    if (!any_gpu)
      usage.gpu_note =
          "slurm: sstat has no GPU figures for this job (Slurm gathers them where gres.conf has "
          "AutoDetect=nvml and AccountingStorageTRES includes gres/gpumem,gres/gpuutil)";
    return std::optional(std::move(usage));
  }

  // One sinfo of every node (a row per node and partition) and the queue's rows (the batched
  // reader every status shares) for which of the user's jobs run where.
  Result<std::vector<HostInfo>> Hosts() override {
    TORCHX_ASSIGN_OR_RETURN(auto sinfo,
                            Tool({"sinfo", "-N", "-h", "-O", std::string(kSinfoNodeFormat)}, std::chrono::seconds(30)));
    if (sinfo.exit_code != 0) return UnavailableError(fmt::format("slurm: sinfo: {}", Trim(sinfo.err)));
    TORCHX_ASSIGN_OR_RETURN(std::vector<HostInfo> hosts, ParseSinfoNodes(sinfo.out));
    TORCHX_ASSIGN_OR_RETURN(auto jobs, reader_.QueueJobs());
    PlaceJobs(jobs, hosts);
    return hosts;
  }

  // Each running replica's processes on its node, dumped there by torchx-stacks, reached with
  // `srun --overlap` into the job (no ssh, no login to the node).
  Result<std::optional<std::vector<ProcessStack>>> DumpStacks(const std::string& app_id,
                                                              const StackOptions& options) override {
    TORCHX_ASSIGN_OR_RETURN(auto chosen, RunningReplicas(app_id, options.role, options.replica_id, "dump"));
    if (!chosen) return std::optional<std::vector<ProcessStack>>();
    TORCHX_ASSIGN_OR_RETURN(std::string helper, StacksHelper());
    std::vector<ProcessStack> out;
    // One srun per replica, in turn: the whole dump within two minutes (a node that does not answer
    // takes one srun's minute); replicas past that are listed with why.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    for (const SlurmJob& j : *chosen) {
      auto [role, replica] = RoleAndReplica(j.name);
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      auto ran =
          left < std::chrono::seconds(1)
              ? Result<internal::CommandResult>(DeadlineExceededError(
                    "not dumped: the dump's 2 minute limit was reached (dump one replica with --role and "
                    "--replica)"))
              : Tool(StacksCommand(helper, j), std::min<std::chrono::milliseconds>(left, std::chrono::seconds(60)));
      Result<std::vector<ProcessStack>> got =
          !ran ? Result<std::vector<ProcessStack>>(ran.error())
          : ran->exit_code != 0
              ? Result<std::vector<ProcessStack>>(FailedPreconditionError(
                    fmt::format("srun --overlap into job {} on {} failed: {}", j.raw_id, j.hostname,
                                Trim(ran->err).empty() ? "exit " + std::to_string(ran->exit_code) : Trim(ran->err))))
              : ProcessStacksFromJson(ran->out);
      if (!got) {  // this replica has no stacks, and says why; the others are still dumped
        ProcessStack p;
        p.role = role;
        p.replica_id = replica;
        p.host = j.hostname;
        p.error = got.error().message();
        out.push_back(std::move(p));
        continue;
      }
      if (got->empty()) {  // the helper ran on the node and found none of the job's processes there
        ProcessStack none;
        none.role = role;
        none.replica_id = replica;
        none.host = j.hostname;
        none.error = fmt::format("no process of job {} found on {} (it may run in a container of its own)", j.job_id,
                                 j.hostname);
        out.push_back(std::move(none));
        continue;
      }
      for (ProcessStack& p : *got) {
        p.role = role;
        p.replica_id = replica;
        p.host = j.hostname;  // Slurm's name for the node (the machine's may differ, or be shared)
        out.push_back(std::move(p));
      }
    }
    return std::optional(std::move(out));
  }

  // torchx-stacks --profile on the replica's node: py-spy's speedscope JSON on srun's stdout.
  Status Profile(const std::string& app_id, const ProfileOptions& options) override {
    TORCHX_ASSIGN_OR_RETURN(auto chosen, RunningReplicas(app_id, options.role, options.replica_id, "profile"));
    if (!chosen) return NotFoundError(fmt::format("slurm: job {} not found", app_id));
    if (chosen->size() > 1) {
      std::vector<std::string> names;
      for (const SlurmJob& j : *chosen) names.push_back(j.name);
      return InvalidArgumentError(fmt::format(
          "a profile is of one replica, and job {} has {} running that match ({}): name one with --role and --replica",
          app_id, chosen->size(), fmt::join(names, ", ")));
    }
    TORCHX_ASSIGN_OR_RETURN(std::string helper, StacksHelper());
    const SlurmJob& j = chosen->front();
    auto limit = std::chrono::milliseconds(static_cast<long long>(options.seconds * 1000)) + std::chrono::seconds(90);
    TORCHX_ASSIGN_OR_RETURN(
        auto ran, Tool(StacksCommand(helper, j, {"--profile", fmt::format("{}", std::ceil(options.seconds))}), limit));
    if (ran.exit_code != 0) {
      return FailedPreconditionError(
          fmt::format("slurm: profiling job {} on {} failed: {}", j.raw_id, j.hostname,
                      Trim(ran.err).empty() ? "exit " + std::to_string(ran.exit_code) : Trim(ran.err)));
    }
    std::ofstream out(options.output, std::ios::binary | std::ios::trunc);
    out << ran.out;
    if (!out.good()) return InternalError(fmt::format("cannot write {}", options.output));
    return OkStatus();
  }

  Result<std::vector<ListAppResponse>> List() override {
    std::vector<SlurmJob> jobs;
    TORCHX_ASSIGN_OR_RETURN(auto accounted, reader_.AccountedJobs());
    if (accounted) jobs = std::move(*accounted);
    TORCHX_ASSIGN_OR_RETURN(auto live, reader_.QueueJobs());  // accounting lags, or is absent
    jobs.insert(jobs.end(), live.begin(), live.end());
    std::vector<ListAppResponse> out;
    std::vector<std::string> seen;
    for (const SlurmJob& j : jobs) {
      if (std::find(seen.begin(), seen.end(), j.job_id) != seen.end()) continue;
      seen.push_back(j.job_id);
      auto d = DescribeFromJobs(j.job_id, live);
      if (!d) d = DescribeFromJobs(j.job_id, jobs);
      ListAppResponse r;
      r.app_id = j.job_id;
      r.state = d->state;
      r.name = j.name;
      for (const SlurmJob& a : jobs) {  // accounting's row, or the queue's while accounting lags
        if (a.job_id == j.job_id && a.submitted && !r.created) r.created = a.submitted;
      }
      out.push_back(std::move(r));
    }
    // Newest first, as the other back-ends list (job ids grow with each submission): a dashboard
    // or `torchx list | head` shows the latest jobs of a long-lived cluster, not its oldest.
    auto number = [](const std::string& id) { return std::strtoll(id.c_str(), nullptr, 10); };
    std::stable_sort(out.begin(), out.end(), [&](const ListAppResponse& a, const ListAppResponse& b) {
      return number(a.app_id) > number(b.app_id);
    });
    return out;
  }

  Result<std::unique_ptr<LogIterator>> LogIter(const std::string& app_id, const LogOptions& o) override {
    fs::path dir = JobDir(app_id);
    std::string base = fmt::format("slurm-{}-{}-{}", app_id, o.role, o.replica);
    std::vector<fs::path> files;
    if (o.stream != LogStream::kStderr) files.push_back(dir / (base + ".out"));
    if (o.stream != LogStream::kStdout) files.push_back(dir / (base + ".err"));
    std::error_code ec;
    bool any = false;
    for (const auto& f : files) any |= fs::exists(f, ec);
    if (!any && !o.follow) {
      return NotFoundError(
          fmt::format("slurm: no log files {}.{{out,err}} in {} (logs live in the job's working "
                      "dir or job_dir)",
                      base, dir.string()));
    }
    // Whether the job is over is asked at most every 2 s: each answer is an squeue call, and Slurm
    // asks users not to loop on squeue. A controller that cannot be reached is not the job's end:
    // the files keep growing through an outage, followed for as long as Runner::Wait waits one out.
    static constexpr auto kAskEvery = std::chrono::seconds(2);
    static constexpr auto kOutageLimit = std::chrono::minutes(10);
    using TimePoint = std::chrono::steady_clock::time_point;
    auto finished = [this, app_id, asked = std::optional<TimePoint>(),
                     outage_since = std::optional<TimePoint>()]() mutable {
      TimePoint now = clock_->Now();
      if (asked && now - *asked < kAskEvery) return false;
      asked = now;
      auto d = Describe(app_id);
      if (!d && d.error().code() == StatusCode::kUnavailable) {
        if (!outage_since) outage_since = now;
        return now - *outage_since >= kOutageLimit;
      }
      outage_since.reset();
      return !d || !*d || specs::IsTerminal((*d)->state);
    };
    return std::unique_ptr<LogIterator>(MakeReplicaLogLines(files, o.follow, finished, clock_));
  }

 protected:
  Result<DryRunInfo> DoDryRun(const specs::AppDef& app, const specs::ResolvedCfg& cfg) override {
    SlurmOptions options = SlurmOptions::From(cfg);
    const ClusterFacts& facts = Facts();
    std::optional<int> mem = facts.partitions ? PartitionMemMB(*facts.partitions, options.partition) : std::nullopt;
    TORCHX_ASSIGN_OR_RETURN(SlurmBatchRequest req, BuildSlurmRequest(app, options, facts.version, mem));
    req.workspace = std::exchange(workspace_dir_, {});  // this dry run's: a later one without --workspace has none
    std::string pushed_note;
    for (const specs::Role& role : app.roles) {
      if (!workspace_images_.contains(role.image) ||
          std::find(req.push.begin(), req.push.end(), role.image) != req.push.end()) {
        continue;
      }
      req.push.push_back(role.image);
      pushed_note += "# workspace image pushed before sbatch: " + role.image + "\n";
    }
    DryRunInfo info;
    info.app = app;
    std::string script = req.Materialize();
    info.request = fmt::format("{}{} <script>\n\n{}", pushed_note, fmt::join(req.cmd, " "), script);
    info.payload = SlurmBatchRequestToJson(req);
    return info;
  }

  Status DoCancel(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(auto res, Tool({"scancel", app_id}, std::chrono::seconds(30)));
    if (res.exit_code != 0) return UnavailableError(fmt::format("slurm: scancel {}: {}", app_id, Trim(res.err)));
    reader_.Touched(app_id);
    return OkStatus();
  }

 private:
  static std::string Trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

  // sbatch of `script` with `req`'s flags: workspace images pushed first, the script written to
  // job_dir (the workspace copied there) or a temp dir. Returns the job id.
  Result<std::string> Submit(const SlurmBatchRequest& req, const std::string& script) {
    // Workspace images go to the registry first: the nodes' container plugin pulls them.
    for (const std::string& ref : req.push) {
      size_t colon = ref.rfind(':');  // the decoder checked `repo:tag`
      TORCHX_RETURN_IF_ERROR(
          container_engine::PushImage(Engine(), ref.substr(0, colon), ref.substr(colon + 1), "slurm"));
    }
    std::vector<std::string> cmd = req.cmd;
    std::string job_dir = req.job_dir;
    fs::path script_path;
    std::error_code ec;
    if (!job_dir.empty()) {
      TORCHX_RETURN_IF_ERROR(
          CopyWorkspace(req.workspace.empty() ? fs::current_path(ec) : fs::path(req.workspace), job_dir));
      script_path = fs::path(job_dir) / "torchx-sbatch.sh";
      cmd.push_back("--chdir=" + job_dir);
    } else {
      std::string tmpl = (fs::temp_directory_path(ec) / "torchx-slurm-XXXXXX").string();
      if (!mkdtemp(tmpl.data())) return InternalError("slurm: cannot create a temp dir for the batch script");
      script_path = fs::path(tmpl) / "torchx-sbatch.sh";
    }
    std::ofstream(script_path) << script;
    cmd.push_back(script_path.string());
    auto submitted = Tool(cmd, std::chrono::seconds(60));
    // sbatch hands slurmctld a copy of the script: the temporary one goes once it has answered.
    if (job_dir.empty()) fs::remove_all(script_path.parent_path(), ec);
    TORCHX_ASSIGN_OR_RETURN(auto res, std::move(submitted));
    if (res.exit_code != 0) {
      // The controller could not be asked (try again later), or it refused the job (a drained or
      // unknown partition, a limit): callers that retry (managed jobs) tell the two apart.
      std::string why = fmt::format("slurm: sbatch failed (exit {}): {}", res.exit_code, Trim(res.err));
      for (std::string_view outage : {"Unable to contact slurm controller", "Socket timed out", "Connection refused",
                                      "Zero Bytes were transmitted", "in standby mode"}) {
        if (res.err.find(outage) != std::string::npos) return UnavailableError(why);
      }
      return FailedPreconditionError(why);
    }
    std::string id = Trim(res.out);
    id = id.substr(0, id.find(';'));  // `--parsable` prints "id" or "id;cluster"
    if (id.empty()) return UnavailableError("slurm: sbatch printed no job id");
    if (!job_dir.empty()) std::ofstream(kJobDirsFile, std::ios::app) << id << " = " << job_dir << "\n";
    return id;
  }

  // The app's running components that `role`/`replica` pick (all when neither is given); nullopt
  // for an unknown job; kFailedPrecondition for one that has ended or has not started.
  Result<std::optional<std::vector<SlurmJob>>> RunningReplicas(const std::string& app_id, const std::string& role,
                                                               std::optional<int> replica, std::string_view what) {
    TORCHX_ASSIGN_OR_RETURN(JobRows rows, reader_.Rows(app_id));
    auto d = DescribeFromJobs(app_id, rows.jobs);
    if (!d) {
      if (rows.controller_error) return UnavailableError(fmt::format("slurm: squeue: {}", *rows.controller_error));
      return std::optional<std::vector<SlurmJob>>();
    }
    if (!specs::IsTerminal(d->state) && rows.controller_error) {  // accounting's word: the queue cannot say
      return UnavailableError(fmt::format("slurm: squeue: {}", *rows.controller_error));
    }
    if (specs::IsTerminal(d->state) || rows.source != JobRows::Source::kQueue) {
      return FailedPreconditionError(
          fmt::format("job {} has ended ({}): it has no process to {}", app_id, specs::AppStateName(d->state), what));
    }
    std::vector<SlurmJob> chosen;
    std::vector<std::string> names;
    for (const SlurmJob& j : rows.jobs) {
      auto [r, i] = RoleAndReplica(j.name);
      names.push_back(fmt::format("{}/{}", r, i));
      if (!role.empty() && r != role) continue;
      if (replica && i != *replica) continue;
      if (SlurmStateToAppState(j.state) != specs::AppState::kRunning) continue;
      chosen.push_back(j);
    }
    if (chosen.empty()) {
      return FailedPreconditionError(fmt::format("no replica of job {} that matches is running (replicas: {}; job {})",
                                                 app_id, fmt::join(names, ", "), specs::AppStateName(d->state)));
    }
    return std::optional(std::move(chosen));
  }

  static Result<std::string> StacksHelper() {
#ifdef TORCHX_STACKS_BUILD_PATH
    const char* build_path = TORCHX_STACKS_BUILD_PATH;
#else
    const char* build_path = nullptr;
#endif
    return internal::FindHelperExecutable("torchx-stacks", "TORCHX_STACKS", build_path);
  }

  Result<internal::CommandResult> Tool(const std::vector<std::string>& argv, std::chrono::milliseconds t) {
    auto res = tools_->Run(argv, "", t);
    if (!res && res.error().code() == StatusCode::kNotFound) {
      return UnavailableError(fmt::format("slurm: {} (is this a Slurm login node?)", res.error().message()));
    }
    return res;
  }

  // What dry runs ask sinfo: the version and the partitions' memory. Kept for a minute, so the
  // trials of a sweep (hundreds of dry runs in one process) ask once, and a long-lived process
  // (the dashboard, a Python Runner) still sees a changed cluster.
  struct ClusterFacts {
    SlurmVersion version;  // 24.05 when sinfo cannot tell (as TorchX)
    std::optional<std::string> partitions;
    std::optional<std::chrono::steady_clock::time_point> read;
  };
  // Shared with the host's other processes as the queue is (each `torchx run` is a process of
  // its own: two sinfo calls were most of its time over a bare sbatch). Snapshot rows: the
  // version line, then "partitions" and sinfo's list, or "no partitions".
  const ClusterFacts& Facts() {
    auto now = clock_->Now();
    if (facts_.read && now - *facts_.read < std::chrono::minutes(1)) return facts_;
    facts_ = ClusterFacts{};
    QueueSnapshot shared = reader_.SharedFor(SnapshotKind::kClusterFacts, 60, [&] {
      QueueSnapshot s;
      s.taken_at = clock_->EpochSeconds();
      auto v = Tool({"sinfo", "--version"}, std::chrono::seconds(10));
      auto p = Tool({"sinfo", "--format", "%P,%m", "--noconvert", "-h"}, std::chrono::seconds(10));
      s.answered_at = clock_->EpochSeconds();
      bool version_ok = v && v->exit_code == 0;
      bool partitions_ok = p && p->exit_code == 0;
      std::string version = version_ok ? v->out.substr(0, v->out.find('\n')) : "";
      s.rows = version + "\n" + (partitions_ok ? "partitions\n" + p->out : std::string("no partitions\n"));
      s.shared = version_ok && partitions_ok;  // an answer of the cluster's, for every process
      return s;
    });
    std::string_view rows = shared.rows;
    size_t nl = rows.find('\n');
    if (auto parsed = ParseSlurmVersion(std::string(rows.substr(0, nl)))) facts_.version = *parsed;
    constexpr std::string_view kListed = "partitions\n";
    if (nl != std::string_view::npos && rows.substr(nl + 1).starts_with(kListed)) {
      facts_.partitions = std::string(rows.substr(nl + 1 + kListed.size()));
    }
    facts_.read = now;
    return facts_;
  }

  // RealMemory (MB) of the partition the job goes to (`want`, else the default, marked *).
  static std::optional<int> PartitionMemMB(const std::string& sinfo, const std::string& want) {
    std::istringstream in(sinfo);
    std::string line;
    while (std::getline(in, line)) {
      size_t comma = line.find(',');
      if (comma == std::string::npos) continue;
      std::string part = line.substr(0, comma);
      bool is_default = !part.empty() && part.back() == '*';
      if (is_default) part.pop_back();
      if (want.empty() ? is_default : part == want) {
        try {
          return std::stoi(line.substr(comma + 1));
        } catch (...) {
          return std::nullopt;
        }
      }
    }
    return std::nullopt;
  }

  container_engine::EngineClient Engine() {
    if (!engine_http_) engine_http_ = internal::MakeCurlHttpClient();
    return container_engine::EngineClient(engine_http_);
  }

  std::shared_ptr<internal::CommandRunner> tools_;
  std::shared_ptr<const Clock> clock_;
  std::shared_ptr<internal::HttpClient> engine_http_;
  std::string workspace_dir_;               // BuildWorkspace, workspace_type=dir
  std::set<std::string> workspace_images_;  // BuildWorkspace, workspace_type=docker: pushed by Schedule
  ClusterFacts facts_;
  QueueReader reader_;
};

}  // namespace

std::unique_ptr<Scheduler> MakeSlurmScheduler(const std::string& session_name,
                                              std::shared_ptr<internal::CommandRunner> tools,
                                              std::shared_ptr<const Clock> clock,
                                              std::shared_ptr<internal::HttpClient> engine_http, QueueReading reading) {
  if (!clock) clock = std::make_shared<SystemClock>();
  return std::make_unique<SlurmScheduler>(session_name, std::move(tools), std::move(clock), std::move(engine_http),
                                          reading);
}

namespace {

// Slurm prints times in the user's SLURM_TIME_FORMAT (`relative`, or any strftime format); the
// status parsers read the standard one, so squeue and sacct are run with it. sbatch keeps the
// user's environment whole: the job inherits it.
class SlurmTools final : public internal::CommandRunner {
 public:
  Result<internal::CommandResult> Run(const std::vector<std::string>& argv, const std::string& cwd,
                                      std::chrono::milliseconds timeout) override {
    bool query = !argv.empty() && (argv[0] == "squeue" || argv[0] == "sacct");
    return internal::RunCommand(
        argv, cwd, timeout,
        query ? std::vector<std::string>{"SLURM_TIME_FORMAT=standard"} : std::vector<std::string>{});
  }
};

}  // namespace

Result<double> StatusInterval(const std::map<std::string, std::string, std::less<>>& settings) {
  constexpr double kDefault = 2;
  auto it = settings.find("status_interval");
  if (it == settings.end()) return kDefault;
  const std::string& text = it->second;
  char* end = nullptr;
  double seconds = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(seconds > 0) || seconds > 600) {
    return InvalidArgumentError(fmt::format(
        "slurm: .torchxconfig [slurm] status_interval: `{}` is not a number of seconds in (0, 600] (default {})", text,
        kDefault));
  }
  return seconds;
}

std::vector<SchedulerEntry> BackendSchedulers() {
  return {{"slurm", [](const SchedulerContext& context) -> Result<std::unique_ptr<Scheduler>> {
             TORCHX_ASSIGN_OR_RETURN(double interval, StatusInterval(context.settings));
             return MakeSlurmScheduler(context.session_name, std::make_shared<SlurmTools>(), context.clock, nullptr,
                                       QueueReading{HostSnapshotStore(), interval});
           }}};
}

}  // namespace torchx::schedulers::slurm
