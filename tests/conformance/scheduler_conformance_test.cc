// The behaviour every scheduler back-end must have, run against each registered back-end that
// can run here. A new back-end adds an environment to Backends() and gets the whole suite.
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <signal.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>

#include <gtest/gtest.h>

#include "plugins/backend_modules.h"
#include "testing/local_env.h"
#include "testing/log_lines.h"
#include "testing/registry.h"
#include "testing/status_matchers.h"
#include "torchx/specs/app_handle.h"

namespace torchx {
namespace {

using specs::AppState;
using ::testing::HasSubstr;

struct Backend {
  std::string name;
  /// Sets up the engine for one test (e.g. a private state dir); destroyed after it.
  std::function<std::shared_ptr<void>()> environment;
  std::string image;  ///< what roles run in (container back-ends)
  /// Empty when the engine is here; else why not (the test is skipped, or fails when the engine
  /// is named in TORCHX_REQUIRE_ENGINES).
  std::function<std::string()> unavailable = [] { return std::string(); };
  std::string engine;  ///< its name in TORCHX_REQUIRE_ENGINES
  /// Registers a back-end the build's table does not list (the test-only example back-end).
  std::function<void(plugins::PluginRegistry&)> add_to = [](plugins::PluginRegistry&) {};
  /// Run options every submission takes (what the back-end requires, e.g. kubernetes' queue).
  specs::Cfg cfg = {};
  /// An app id of the back-end's form that names no app (kubernetes' is `<namespace>:<job>`).
  std::string unknown_app_id = "no-such-app-9";
  /// Each log line starts with the engine's RFC 3339 timestamp and a space (kubernetes: TorchX's
  /// scheduler asks the kubelet for them, and so does this one).
  bool timestamped_lines = false;
  /// How long an app may take to end. A Ray job starts a driver and an actor per replica, each a
  /// Python worker: on the loaded 2-core CI machine that takes longer than a process or a container.
  std::chrono::milliseconds wait = std::chrono::seconds(30);
};

// A log line without the timestamp a back-end with timestamped_lines puts first.
std::string Content(const Backend& b, const std::string& line) {
  if (!b.timestamped_lines) return line;
  size_t space = line.find(' ');
  EXPECT_NE(space, std::string::npos) << "no timestamp in " << line;
  EXPECT_TRUE(space != std::string::npos && space > 0 && line[space - 1] == 'Z') << "no timestamp in " << line;
  return space == std::string::npos ? line : line.substr(space + 1);
}

// The example back-end's engine directory, and where its module is, for one test.
class ExampleEngineEnv {
 public:
  // Every job the test left running ends with it (each leads its own process group).
  ~ExampleEngineEnv() {
    std::error_code ec;
    for (const auto& app : std::filesystem::directory_iterator(dir_.path(), ec)) {
      std::ifstream pid_file(app.path() / "pid");
      long pid = 0;
      if (pid_file >> pid && pid > 1 && !std::filesystem::exists(app.path() / "exit"))
        ::kill(-static_cast<pid_t>(pid), SIGKILL);
    }
  }
  const testing::ScopedTempDir& dir() const { return dir_; }

 private:
  testing::ScopedTempDir dir_;
  testing::ScopedEnv engine_{"TORCHX_EXAMPLE_ENGINE_DIR", dir_.path().c_str()};
  testing::ScopedEnv modules_{"TORCHX_BACKEND_PATH", EXAMPLE_BACKEND_DIR};
};

// A Slurm job's files (its batch script, `slurm-<job>-<replica>.out`) go to the directory it is
// submitted from: one private directory per test, the process's cwd for the test's life (ctest
// runs each case in its own process).
class SlurmEnv {
 public:
  SlurmEnv() : old_(std::filesystem::current_path()) { std::filesystem::current_path(dir_.path()); }
  ~SlurmEnv() {
    std::error_code ec;
    std::filesystem::current_path(old_, ec);
  }

 private:
  testing::ScopedTempDir dir_;
  std::filesystem::path old_;
};

// Empty when a Slurm cluster answers here (scripts/engines/slurm-up.sh), else why not.
std::string SlurmMissing() {
  return std::system("sinfo >/dev/null 2>&1") == 0 ? ""
                                                   : "no Slurm cluster answers `sinfo` (scripts/engines/slurm-up.sh)";
}

// A fake Kubernetes cluster for one test: the API server fake with its kubelet
// (tests/integration/kubernetes/fake_kubelet.py: each pod's container a local process), over TLS
// on loopback, reached through KUBECONFIG. The fake ends when its stdin closes (this process
// dying included) or at SIGTERM.
class KubernetesEnv {
 public:
  KubernetesEnv() {
    int in[2];
    if (pipe(in) != 0) return;
    std::string script = std::string(TORCHX_SOURCE_DIR) + "/tests/integration/kubernetes/fake_kubelet.py";
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      close(in[0]);
      close(in[1]);
      execlp("python3", "python3", script.c_str(), dir_.path().c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in[0]);
    stdin_ = in[1];
    auto config = std::filesystem::path(dir_.path()) / "kubeconfig";
    for (int i = 0; i < 300 && !std::filesystem::exists(config); ++i) usleep(50 * 1000);
    kubeconfig_ = std::make_unique<testing::ScopedEnv>("KUBECONFIG", config.c_str());
  }
  ~KubernetesEnv() {
    if (stdin_ >= 0) close(stdin_);
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
  }

 private:
  testing::ScopedTempDir dir_;
  pid_t pid_ = -1;
  int stdin_ = -1;
  std::unique_ptr<testing::ScopedEnv> kubeconfig_;
};

std::string KubernetesFakeMissing() {
  return std::system("python3 -c 'import ssl' >/dev/null 2>&1 && openssl version >/dev/null 2>&1") == 0
             ? ""
             : "the kubernetes API server fake needs python3 and openssl";
}

// A Python scheduler plugin (tests/conformance/python_plugin) reached through the JSON bridge, as
// the CLI reaches every Python plugin: its engine's directory and the plugin on PYTHONPATH.
class PythonPluginEnv {
 public:
  PythonPluginEnv() : pythonpath_("PYTHONPATH", PythonPath().c_str()) {}

 private:
  static std::string PythonPath() {
    std::string path = std::string(TORCHX_SOURCE_DIR) + "/tests/conformance/python_plugin";
    const char* old = std::getenv("PYTHONPATH");
    return old && *old ? path + ":" + old : path;
  }
  testing::ScopedTempDir dir_;
  testing::ScopedEnv engine_{"CONFORMANCE_PY_DIR", dir_.path().c_str()};
  testing::ScopedEnv pythonpath_;
};

// Empty when the torchx package (with its extension) is installed for python3, else why not.
std::string PythonPackageMissing() {
  return std::system("python3 -c 'import torchx._torchx' >/dev/null 2>&1") == 0
             ? ""
             : "the torchx Python package is not installed (scripts/build-python.sh)";
}

std::string DockerSocketMissing() {
  const char* path = "/var/run/docker.sock";
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path, sizeof(addr.sun_path) - 1);
  bool up = fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  if (fd >= 0) close(fd);
  return up ? "" : "no container engine at /var/run/docker.sock (scripts/engines/dockerd-up.sh)";
}

// The project's test Ray cluster: its dashboard's address (scripts/engines/ray-env.sh; test.sh
// exports it), not Ray's default port, where a user's own cluster may run.
std::string RayDashboard() {
  const char* env = std::getenv("TORCHX_RAY_DASHBOARD");
  return env && *env ? env : "127.0.0.1:8275";
}

// A live Ray cluster's dashboard answers (scripts/engines/ray-up.sh: two nodes on this host).
std::string RayMissing() {
  return std::system(("curl -fsS -m 3 http://" + RayDashboard() + "/api/version >/dev/null 2>&1").c_str()) == 0
             ? ""
             : "no Ray dashboard answers on " + RayDashboard() + " (scripts/engines/ray-up.sh)";
}

// The ray back-end keeps a record of each job it submits (to tell a job Ray lost from an unknown
// one): in a private state dir for one test.
class RayEnv {
 private:
  testing::ScopedTempDir dir_;
  testing::ScopedEnv state_{"TORCHX_STATE_DIR", dir_.path().c_str()};
  testing::ScopedEnv address_{"RAY_ADDRESS", ("http://" + RayDashboard()).c_str()};
};

std::vector<Backend> Backends() {
  auto local = [] { return std::shared_ptr<void>(std::make_shared<testing::LocalSchedulerEnv>()); };
  auto docker = [] { return std::shared_ptr<void>(); };
  Backend docker_backend{"local_docker", docker, "busybox:latest", DockerSocketMissing, "docker"};
  Backend cwd{"local_cwd", local, "", [] { return std::string(); }, ""};
  Backend local_alias = cwd;
  local_alias.name = "local";
  // The test-only example back-end (tests/example_backend), registered with one line.
  Backend example{"example", [] { return std::shared_ptr<void>(std::make_shared<ExampleEngineEnv>()); }, "",
                  [] { return std::string(); }, ""};
  example.add_to = [](plugins::PluginRegistry& r) {
    plugins::AddLoadableBackend(r, {nullptr, "torchx_backend_example.so", {"example"}});
  };
  // The real Slurm cluster the test command starts (three nodes on this host).
  Backend slurm{"slurm", [] { return std::shared_ptr<void>(std::make_shared<SlurmEnv>()); }, "", SlurmMissing, "slurm"};
  // kubernetes against the API server fake and its kubelet (no cluster runs here).
  Backend kubernetes{"kubernetes", [] { return std::shared_ptr<void>(std::make_shared<KubernetesEnv>()); },
                     "busybox:latest", KubernetesFakeMissing, ""};
  kubernetes.cfg = {{"queue", std::string("default")}};
  kubernetes.unknown_app_id = "default:no-such-app-9";
  kubernetes.timestamped_lines = true;
  // A Python plugin scheduler through the JSON bridge (the package is installed by the test
  // command's package stage; engine `python` in TORCHX_REQUIRE_ENGINES).
  Backend python_plugin{"conformance_py", [] { return std::shared_ptr<void>(std::make_shared<PythonPluginEnv>()); }, "",
                        PythonPackageMissing, "python"};
  python_plugin.add_to = [](plugins::PluginRegistry& r) { plugins::AddPythonBridgeProvider(r); };
  // ray on the live cluster the test command starts.
  Backend ray{"ray", [] { return std::shared_ptr<void>(std::make_shared<RayEnv>()); }, RAY_IMAGE_DIR, RayMissing,
              "ray"};
  ray.unknown_app_id = RayDashboard() + "-no-such-app-9";
  ray.wait = std::chrono::seconds(120);
  return {cwd, local_alias, docker_backend, example, slurm, kubernetes, ray, python_plugin};
}

class SchedulerConformance : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (std::string why = GetParam().unavailable(); !why.empty()) {
      const char* required = std::getenv("TORCHX_REQUIRE_ENGINES");
      if (required &&
          std::string(",").append(required).append(",").find("," + GetParam().engine + ",") != std::string::npos) {
        FAIL() << why << " (required by TORCHX_REQUIRE_ENGINES)";
      }
      GTEST_SKIP() << why;
    }
    env_ = GetParam().environment();
    GetParam().add_to(*registry_);
  }
  // Every app this test submitted ends with it, and is removed where the back-end keeps them (a
  // container engine): only this test's own, since ctest runs the cases of a back-end at once.
  void TearDown() override {
    for (const std::string& h : submitted_) {
      (void)runner_.Cancel(h);
      testing::WaitTerminal(runner_, h, GetParam().wait);
      if (runner_.SchedulerCapabilities(sched())
              .value_or(schedulers::Capabilities{})
              .Has(schedulers::Capability::kDelete)) {
        (void)runner_.Delete(h);
      }
    }
  }
  Result<std::string> Submit(const specs::AppDef& app) {
    auto h = runner_.Run(app, sched(), GetParam().cfg);
    if (h.ok()) submitted_.push_back(*h);
    return h;
  }
  const std::string& sched() const { return GetParam().name; }
  specs::AppDef Sh(const std::string& script, int replicas = 1) {
    specs::Role r;
    r.name = "main";
    r.entrypoint = "sh";
    r.args = {"-c", script};
    r.num_replicas = replicas;
    r.image = GetParam().image;
    r.resource = specs::Resource{1, 0, 128, {}, {}, {}};
    return specs::AppDef{"conf", {r}, {}};
  }
  std::shared_ptr<void> env_;
  std::vector<std::string> submitted_;
  std::unique_ptr<plugins::PluginRegistry> registry_ = testing::BuiltinRegistry();
  runner::Runner runner_{*registry_};
};

TEST_P(SchedulerConformance, DryRunBuildsAPrintableRequestWithoutSubmitting) {
  auto info = runner_.DryRun(Sh("true"), sched(), GetParam().cfg);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->scheduler, sched());
  EXPECT_FALSE(info->request.empty());
  EXPECT_EQ(info->app.roles[0].env.at("TORCHX_JOB_ID"), sched() + "://torchx/${app_id}");
  if (!info->app_id.empty()) {
    EXPECT_THAT(runner_.Status(specs::MakeAppHandle(sched(), "torchx", info->app_id)), IsOkAndHolds(std::nullopt));
  }
}

TEST_P(SchedulerConformance, RejectsInvalidAppsAndOptionsBeforeSubmitting) {
  specs::AppDef bad = Sh("true");
  bad.roles[0].num_replicas = 0;
  EXPECT_THAT(runner_.DryRun(bad, sched(), GetParam().cfg),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("num_replicas")));
  auto opts = runner_.SchedulerRunOpts(sched());
  ASSERT_THAT(opts, IsOk());
  for (const auto& [key, opt] : opts->options()) {
    if (opt.type == specs::CfgType::kStr) continue;
    specs::Cfg cfg = GetParam().cfg;
    cfg[key] = std::string("not-a-") + std::string(specs::CfgTypeName(opt.type));
    EXPECT_THAT(runner_.DryRun(Sh("true"), sched(), cfg),
                StatusIs(StatusCode::kInvalidArgument, HasSubstr("Run option: " + key)));
    break;
  }
}

TEST_P(SchedulerConformance, RunsToSucceededAndFailed) {
  auto ok = Submit(Sh("exit 0", 2));
  auto bad = Submit(Sh("exit 1"));
  ASSERT_THAT(ok, IsOk());
  ASSERT_THAT(bad, IsOk());
  EXPECT_EQ(specs::ParseAppHandle(*ok)->scheduler_backend, sched());
  auto s1 = testing::WaitTerminal(runner_, *ok, GetParam().wait);
  auto s2 = testing::WaitTerminal(runner_, *bad, GetParam().wait);
  ASSERT_TRUE(s1 && s2);
  EXPECT_EQ(s1->state, AppState::kSucceeded) << s1->msg;
  EXPECT_EQ(s2->state, AppState::kFailed) << s2->msg;
  EXPECT_EQ(s1->roles.at(0).replicas.size(), 2u);
}

// A dry run that says its app id is final is submitted under exactly that id (managed jobs rely
// on it to tell whether a submission a dead driver made happened).
TEST_P(SchedulerConformance, AFinalDryRunIdIsTheSubmittedId) {
  auto info = runner_.DryRun(Sh("exit 0"), sched(), GetParam().cfg);
  ASSERT_THAT(info, IsOk());
  if (!info->app_id_is_final) GTEST_SKIP() << sched() << " chooses its ids at submission";
  auto h = runner_.Schedule(*info);
  ASSERT_THAT(h, IsOk());
  submitted_.push_back(*h);
  EXPECT_EQ(specs::ParseAppHandle(*h)->app_id, info->app_id);
  testing::WaitTerminal(runner_, *h, GetParam().wait);
}

TEST_P(SchedulerConformance, CancelIsIdempotentAndEndsCancelled) {
  auto h = Submit(Sh("sleep 60"));
  ASSERT_THAT(h, IsOk());
  ASSERT_THAT(runner_.Cancel(*h), IsOk());
  ASSERT_THAT(runner_.Cancel(*h), IsOk());
  auto s = testing::WaitTerminal(runner_, *h, GetParam().wait);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state, AppState::kCancelled);
  EXPECT_THAT(runner_.Cancel(*h), IsOk());
}

TEST_P(SchedulerConformance, UnknownAppIsNotAnError) {
  std::string h = specs::MakeAppHandle(sched(), "torchx", GetParam().unknown_app_id);
  EXPECT_THAT(runner_.Status(h), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(runner_.Describe(h), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(runner_.Cancel(h), IsOk());
}

TEST_P(SchedulerConformance, DescribeReturnsTheSubmittedApp) {
  auto h = Submit(Sh("true"));
  ASSERT_THAT(h, IsOk());
  auto app = runner_.Describe(*h);
  ASSERT_THAT(app, IsOk());
  ASSERT_TRUE(app->has_value());
  EXPECT_EQ((*app)->roles.at(0).name, "main");
  testing::WaitTerminal(runner_, *h, GetParam().wait);
}

TEST_P(SchedulerConformance, ListAndLogsWhenDeclared) {
  auto h = Submit(Sh("echo conformance-line"));
  ASSERT_THAT(h, IsOk());
  testing::WaitTerminal(runner_, *h, GetParam().wait);
  auto listed = runner_.List(sched());
  ASSERT_THAT(listed, IsOk());
  bool found = false;
  for (const auto& a : *listed) found = found || a.app_handle == *h;
  EXPECT_TRUE(found);
  schedulers::LogOptions o;
  o.role = "main";
  auto it = runner_.LogLines(*h, o);
  ASSERT_THAT(it, IsOk());
  auto line = (*it)->Next();
  ASSERT_THAT(line, IsOk());
  EXPECT_EQ(Content(GetParam(), line->value_or("")), "conformance-line\n");
}

// The Runner's one line filter over every back-end's lines: a 1 MiB line and a pattern that
// makes a backtracking engine recurse per character (std::regex overflowed the stack here).
TEST_P(SchedulerConformance, LogRegexOverAOneMebibyteLine) {
  auto h = Submit(Sh("head -c 1048576 /dev/zero | tr '\\0' a; echo; echo bac; echo abab"));
  ASSERT_THAT(h, IsOk());
  testing::WaitTerminal(runner_, *h, GetParam().wait);
  auto caps = runner_.SchedulerCapabilities(sched());
  ASSERT_THAT(caps, IsOk());
  for (bool follow : {false, true}) {
    if (follow && !caps->Has(schedulers::Capability::kFollowLogs)) continue;
    schedulers::LogOptions o;
    o.role = "main";
    o.regex = "(a|b)*c";
    o.follow = follow;
    auto it = runner_.LogLines(*h, o);
    ASSERT_THAT(it, IsOk());
    auto lines = testing::ReadAllLines(**it);
    ASSERT_THAT(lines, IsOk());
    for (std::string& l : *lines) l = Content(GetParam(), l);
    EXPECT_EQ(*lines, std::vector<std::string>{"bac\n"}) << "follow=" << follow;
  }
  schedulers::LogOptions bad;
  bad.role = "main";
  bad.regex = "(a";
  EXPECT_THAT(runner_.LogLines(*h, bad), StatusIs(StatusCode::kInvalidArgument, HasSubstr("regex: invalid pattern")));
}

// What a back-end declares is what the Runner lets through: an operation it lacks is refused
// naming the scheduler, never attempted.
TEST_P(SchedulerConformance, CapabilitiesAreWhatTheRunnerChecks) {
  auto caps = runner_.SchedulerCapabilities(sched());
  ASSERT_THAT(caps, IsOk());
  EXPECT_TRUE(caps->Has(schedulers::Capability::kLogs));
  EXPECT_TRUE(caps->Has(schedulers::Capability::kList));
  EXPECT_FALSE(caps->Has(schedulers::Capability::kComposite));
  if (!caps->Has(schedulers::Capability::kFollowLogs)) {
    schedulers::LogOptions o;
    o.role = "main";
    o.follow = true;
    EXPECT_THAT(runner_.LogLines(specs::MakeAppHandle(sched(), "torchx", "x"), o),
                StatusIs(StatusCode::kUnimplemented, HasSubstr("does not support following logs")));
  }
  if (!caps->Has(schedulers::Capability::kDelete)) {
    EXPECT_THAT(runner_.Delete(specs::MakeAppHandle(sched(), "torchx", "x")),
                StatusIs(StatusCode::kUnimplemented, HasSubstr("does not support deleting apps")));
  }
  if (!caps->Has(schedulers::Capability::kNativeDependencies)) {
    EXPECT_THAT(runner_.DependencyCfg(sched(), {specs::MakeAppHandle(sched(), "torchx", "x")}, {}),
                StatusIs(StatusCode::kUnimplemented, HasSubstr("scheduler " + sched() + " does not support native")));
  }
  if (!caps->Has(schedulers::Capability::kWorkspace)) {
    EXPECT_THAT(runner_.DryRun(Sh("true"), sched(), GetParam().cfg, "/tmp"),
                StatusIs(StatusCode::kUnimplemented, HasSubstr("does not support workspaces")));
  }
}

INSTANTIATE_TEST_SUITE_P(Schedulers, SchedulerConformance, ::testing::ValuesIn(Backends()),
                         [](const ::testing::TestParamInfo<Backend>& p) { return p.param.name; });

}  // namespace
}  // namespace torchx
