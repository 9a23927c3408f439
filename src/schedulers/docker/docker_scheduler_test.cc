// local_docker against a fake container engine: a FakeHttpClient whose handlers keep a small
// model of the Docker Engine API (containers/create, start, json with label filters, inspect,
// logs, rename, update, stop, delete). What the scheduler asks for, with TorchX's names and
// labels, and how it reads container states. No engine needed; the real-engine tests are
// tests/integration/docker and the conformance suite.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "schedulers/docker/container_end.h"
#include "schedulers/docker/docker_request.h"
#include "schedulers/docker/docker_scheduler.h"
#include "schedulers/line_filter.h"
#include "testing/fake_clock.h"
#include "testing/fake_http_client.h"
#include "testing/log_lines.h"
#include "testing/status_matchers.h"

namespace torchx::schedulers::docker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Json = nlohmann::json;
using specs::AppState;
using testing::FakeHttpClient;
using Request = FakeHttpClient::Request;
using internal::HttpResponse;

constexpr const char* kSocket = "/fake/docker.sock";
constexpr const char* kAppIdLabel = "torchx.pytorch.org/app-id";

std::string UrlDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i] == '+' ? ' ' : s[i];
    }
  }
  return out;
}

std::string QueryParam(const std::string& path, const std::string& key) {
  size_t q = path.find('?');
  if (q == std::string::npos) return {};
  std::string query = path.substr(q + 1);
  for (size_t b = 0; b <= query.size();) {
    size_t e = query.find('&', b);
    if (e == std::string::npos) e = query.size();
    std::string kv = query.substr(b, e - b);
    if (kv.rfind(key + "=", 0) == 0) return UrlDecode(kv.substr(key.size() + 1));
    b = e + 1;
  }
  return {};
}

// One engine frame of the multiplexed log stream (stream 1 stdout, 2 stderr).
std::string Frame(char stream, const std::string& data) {
  std::string f = {stream, 0, 0, 0};
  uint32_t n = static_cast<uint32_t>(data.size());
  for (int shift : {24, 16, 8, 0}) f += static_cast<char>((n >> shift) & 0xff);
  return f + data;
}

// The engine's side: containers as the Docker Engine API shows them.
struct FakeEngine {
  struct Container {
    std::string id, name;
    Json config;
    std::string state = "created";
    int exit_code = 0;
    std::string logs;  // multiplexed frames
    uint64_t cpu_ns = 0;
  };
  std::vector<Container> containers;
  std::vector<std::string> images = {"busybox:latest"};
  int next_id = 1;

  Container* Find(const std::string& id) {
    for (auto& c : containers) {
      if (c.id == id) return &c;
    }
    return nullptr;
  }

  static HttpResponse NoSuch(const std::string& id) {
    return {404, Json{{"message", "No such container: " + id}}.dump()};
  }

  Result<HttpResponse> Handle(const Request& r) {
    const std::string prefix = "/v1.41/containers/";
    if (r.path.rfind(prefix, 0) != 0) return HttpResponse{404, R"({"message":"page not found"})"};
    std::string rest = r.path.substr(prefix.size());
    std::string base = rest.substr(0, rest.find('?'));
    if (r.method == "POST" && base == "create") {
      Json config = Json::parse(r.body);
      std::string image = config.value("Image", "");
      if (std::find(images.begin(), images.end(), image) == images.end()) {
        return HttpResponse{404, Json{{"message", "No such image: " + image}}.dump()};
      }
      Container c;
      c.id = "c" + std::to_string(next_id++);
      c.name = QueryParam(r.path, "name");
      c.config = config;
      containers.push_back(std::move(c));
      return HttpResponse{201, Json{{"Id", containers.back().id}, {"Warnings", Json::array()}}.dump()};
    }
    if (r.method == "GET" && base == "json") return HttpResponse{200, List(QueryParam(r.path, "filters")).dump()};
    std::string id = base.substr(0, base.find('/'));
    std::string action = base.find('/') == std::string::npos ? "" : base.substr(base.find('/') + 1);
    Container* c = Find(id);
    if (!c) return NoSuch(id);
    if (r.method == "POST" && action == "start") {
      c->state = "running";
      return HttpResponse{204, ""};
    }
    if (r.method == "POST" && action == "rename") {
      c->name = QueryParam(r.path, "name");
      return HttpResponse{204, ""};
    }
    if (r.method == "POST" && action == "update") return HttpResponse{200, R"({"Warnings":[]})"};
    if (r.method == "POST" && action == "stop") {
      if (c->state == "running") {
        c->state = "exited";
        c->exit_code = 143;  // SIGTERM
      }
      return HttpResponse{204, ""};
    }
    if (r.method == "GET" && action == "json") {
      Json config = c->config;  // the engine splits the create body: Config, and HostConfig beside it
      config.erase("HostConfig");
      return HttpResponse{200, Json{{"Id", c->id},
                                    {"Name", "/" + c->name},
                                    {"Config", std::move(config)},
                                    {"RestartCount", 0},
                                    {"State", {{"Status", c->state}, {"ExitCode", c->exit_code}}},
                                    {"HostConfig", c->config.value("HostConfig", Json::object())}}
                                   .dump()};
    }
    if (r.method == "GET" && action == "logs") return HttpResponse{200, c->logs};
    if (r.method == "GET" && action.rfind("stats", 0) == 0) {  // each reading 0.25 s more CPU
      if (c->state != "running") return HttpResponse{409, R"({"message":"container is not running"})"};
      c->cpu_ns += 250'000'000;
      return HttpResponse{200, Json{{"cpu_stats", {{"cpu_usage", {{"total_usage", c->cpu_ns}}}}},
                                    {"memory_stats", {{"usage", 100 << 20}, {"stats", {{"inactive_file", 20 << 20}}}}},
                                    {"pids_stats", {{"current", 3}}}}
                                   .dump()};
    }
    if (r.method == "DELETE" && action.empty()) {
      std::erase_if(containers, [&id](const Container& x) { return x.id == id; });
      return HttpResponse{204, ""};
    }
    return HttpResponse{404, R"({"message":"page not found"})"};
  }

  // GET /containers/json?all=1&filters={"label":["k"|"k=v"]}: the list's summary shape.
  Json List(const std::string& filters) {
    Json f = Json::parse(filters);
    Json out = Json::array();
    for (const Container& c : containers) {
      const Json labels = c.config.value("Labels", Json::object());
      bool keep = true;
      for (const std::string label : f.value("label", Json::array())) {
        size_t eq = label.find('=');
        std::string key = label.substr(0, eq);
        keep &= labels.contains(key) && (eq == std::string::npos || labels[key] == label.substr(eq + 1));
      }
      if (keep) {
        out.push_back({{"Id", c.id}, {"Names", Json::array({"/" + c.name})}, {"Labels", labels}, {"State", c.state}});
      }
    }
    return out;
  }
};

struct Fixture {
  Fixture() {
    for (const char* method : {"GET", "POST", "DELETE"}) {
      http->On(method, "/v1.41/", [this](const Request& r) { return engine.Handle(r); });
    }
  }
  FakeEngine engine;
  std::shared_ptr<FakeHttpClient> http = std::make_shared<FakeHttpClient>();
  std::unique_ptr<Scheduler> sched = MakeDockerScheduler("test", container_engine::EngineClient(http, kSocket));

  Result<std::string> Run(const specs::AppDef& app) {
    TORCHX_ASSIGN_OR_RETURN(auto info, sched->SubmitDryRun(app, {}));
    return sched->Schedule(info);
  }
  AppState StateOf(const std::string& app_id) {
    auto d = sched->Describe(app_id);
    EXPECT_THAT(d, IsOk());
    return d.ok() && d->has_value() ? (*d)->state : AppState::kUnsubmitted;
  }
  // Sets every container of `app_id` (or only replica `replica`) to `state`/`exit_code`.
  void Set(const std::string& app_id, const std::string& state, int exit_code = 0, int replica = -1) {
    for (auto& c : engine.containers) {
      const Json& labels = c.config["Labels"];
      if (labels[kAppIdLabel] != app_id) continue;
      if (replica >= 0 && labels["torchx.pytorch.org/replica-id"] != std::to_string(replica)) continue;
      c.state = state;
      c.exit_code = exit_code;
    }
  }
};

specs::AppDef TwoRoles() {
  specs::Role trainer;
  trainer.name = "trainer";
  trainer.image = "busybox:latest";
  trainer.entrypoint = "echo";
  trainer.args = {"hi"};
  trainer.num_replicas = 2;
  trainer.env = {{"FOO", "bar"}};
  specs::Role ps = trainer;
  ps.name = "ps";
  ps.num_replicas = 1;
  return specs::AppDef{"train", {trainer, ps}, {}};
}

TEST(DockerScheduler, ScheduleCreatesAndStartsOneContainerPerReplicaWithTorchXsNamesAndLabels) {
  Fixture f;
  auto id = f.Run(TwoRoles());
  ASSERT_THAT(id, IsOk());
  EXPECT_THAT(*id, ::testing::StartsWith("train-"));
  ASSERT_EQ(f.engine.containers.size(), 3u);
  std::vector<std::string> names;
  for (const auto& c : f.engine.containers) {
    names.push_back(c.name);
    const Json& labels = c.config["Labels"];
    EXPECT_EQ(labels[kAppIdLabel], *id);
    EXPECT_TRUE(labels.contains("torchx.pytorch.org/version"));
    EXPECT_EQ(c.config["Hostname"], c.name);
    EXPECT_EQ(c.state, "running");  // started
    std::vector<std::string> env = c.config["Env"];
    EXPECT_THAT(env, ::testing::Contains("FOO=bar"));
    EXPECT_THAT(env, ::testing::Contains("TORCHX_RANK0_HOST=" + *id + "-trainer-0"));
    EXPECT_EQ(c.config["HostConfig"]["NetworkMode"], "host");
  }
  EXPECT_THAT(names, ElementsAre(*id + "-trainer-0", *id + "-trainer-1", *id + "-ps-0"));
  EXPECT_EQ(f.engine.containers[1].config["Labels"]["torchx.pytorch.org/role-name"], "trainer");
  EXPECT_EQ(f.engine.containers[1].config["Labels"]["torchx.pytorch.org/replica-id"], "1");
  // Each create is followed by its start, on the configured socket.
  std::vector<std::string> calls;
  for (const auto& r : f.http->requests()) {
    EXPECT_EQ(r.unix_socket, kSocket);
    calls.push_back(r.method + " " + r.path.substr(0, r.path.find('?')));
  }
  EXPECT_THAT(calls, ElementsAre("POST /v1.41/containers/create", "POST /v1.41/containers/c1/start",
                                 "POST /v1.41/containers/create", "POST /v1.41/containers/c2/start",
                                 "POST /v1.41/containers/create", "POST /v1.41/containers/c3/start"));
}

TEST(DockerScheduler, AnImageTheEngineLacksIsNotPulled) {
  Fixture f;
  specs::AppDef app = TwoRoles();
  app.roles[0].image = "ghcr.io/x/trainer:1";
  EXPECT_THAT(f.Run(app), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("image `ghcr.io/x/trainer:1`")));
  EXPECT_THAT(f.Run(app), StatusIs(StatusCode::kFailedPrecondition, HasSubstr(kSocket)));
  EXPECT_TRUE(f.http->RequestsTo("POST", "/v1.41/images").empty());
}

TEST(DockerScheduler, DescribeMapsContainerStatesToAppStates) {
  Fixture f;
  auto id = f.Run(TwoRoles());
  ASSERT_THAT(id, IsOk());
  EXPECT_EQ(f.StateOf(*id), AppState::kRunning);
  f.Set(*id, "created");
  EXPECT_EQ(f.StateOf(*id), AppState::kSubmitted);
  f.Set(*id, "exited", 0);
  EXPECT_EQ(f.StateOf(*id), AppState::kSucceeded);
  f.Set(*id, "exited", 1, /*replica=*/1);
  auto d = f.sched->Describe(*id);
  ASSERT_THAT(d, IsOk());
  ASSERT_TRUE(d->has_value());
  EXPECT_EQ((*d)->state, AppState::kFailed);
  ASSERT_EQ((*d)->roles_statuses.size(), 2u);
  const auto& trainer = (*d)->roles_statuses[1];  // roles sorted by name: ps, trainer
  EXPECT_EQ(trainer.role, "trainer");
  ASSERT_EQ(trainer.replicas.size(), 2u);
  EXPECT_EQ(trainer.replicas[0].state, AppState::kSucceeded);
  EXPECT_EQ(trainer.replicas[1].state, AppState::kFailed);
  EXPECT_EQ(trainer.replicas[1].hostname, *id + "-trainer-1");
  f.Set(*id, "running", 0, /*replica=*/0);  // one still running: the app is running
  EXPECT_EQ(f.StateOf(*id), AppState::kRunning);
  auto unknown = f.sched->Describe("nosuchapp-123");
  ASSERT_THAT(unknown, IsOk());
  EXPECT_FALSE(unknown->has_value());
}

TEST(DockerScheduler, DescribeNativeIsEachContainersCreateBodyAsTheEngineHoldsIt) {
  Fixture f;
  auto id = f.Run(TwoRoles());
  ASSERT_THAT(id, IsOk());
  auto native = f.sched->DescribeNative(*id);
  ASSERT_THAT(native, IsOk());
  ASSERT_TRUE(native->has_value());
  Json payload = Json::parse((*native)->payload);
  EXPECT_EQ(payload["app_id"], *id);
  ASSERT_EQ(payload["containers"].size(), f.engine.containers.size());
  for (const Json& c : payload["containers"]) {
    const FakeEngine::Container* created = nullptr;
    for (const auto& e : f.engine.containers) {
      if (e.name == c["name"]) created = &e;
    }
    ASSERT_NE(created, nullptr) << c["name"];
    Json config = c["config"].is_string() ? Json::parse(c["config"].get<std::string>()) : c["config"];
    EXPECT_EQ(config, created->config);  // Config and HostConfig put back together: the create body
  }
  EXPECT_THAT((*native)->request, HasSubstr(*id + "-trainer-1:"));
  auto unknown = f.sched->DescribeNative("nosuchapp-123");
  ASSERT_THAT(unknown, IsOk());
  EXPECT_FALSE(unknown->has_value());
  // The Python class's state helper is Describe's table.
  EXPECT_THAT(f.sched->Helper("container_state", R"({"status": "exited", "exit_code": 3})"),
              IsOkAndHolds(std::to_string(static_cast<int>(AppState::kFailed))));
  EXPECT_THAT(f.sched->Helper("nope", "{}"), StatusIs(StatusCode::kNotFound, HasSubstr("container_state")));
}

TEST(DockerScheduler, CancelStopsLiveContainersAndTheAppEndsCancelled) {
  Fixture f;
  auto id = f.Run(TwoRoles());
  ASSERT_THAT(id, IsOk());
  f.Set(*id, "exited", 0, /*replica=*/1);  // trainer-1 already done; the others run
  ASSERT_THAT(f.sched->Cancel(*id), IsOk());
  EXPECT_EQ(f.StateOf(*id), AppState::kCancelled);
  // Each container is renamed (the mark later processes see), its restart policy dropped, stopped.
  EXPECT_EQ(f.http->RequestsTo("POST", "/v1.41/containers/c1/stop").size(), 1u);
  EXPECT_EQ(f.http->RequestsTo("POST", "/v1.41/containers/c3/update").size(), 1u);
  EXPECT_EQ(f.engine.containers[0].name, *id + "-trainer-0-cancelled");
  size_t posts = f.http->RequestsTo("POST", "/v1.41/containers/").size();
  ASSERT_THAT(f.sched->Cancel(*id), IsOk());  // terminal now: nothing more is sent
  EXPECT_EQ(f.http->RequestsTo("POST", "/v1.41/containers/").size(), posts);
}

TEST(DockerScheduler, ResourceUsageIsTwoStatsReadingsOfEachRunningContainer) {
  auto clock = std::make_shared<testing::FakeClock>();
  Fixture f;
  f.sched = MakeDockerScheduler("test", container_engine::EngineClient(f.http, kSocket), clock);
  auto id = f.Run(TwoRoles());
  ASSERT_THAT(id, IsOk());
  f.Set(*id, "exited", 0, /*replica=*/1);  // trainer-1 ended: listed, no figures
  auto usage = f.sched->ResourceUsage(*id, {});
  ASSERT_THAT(usage, IsOk());
  ASSERT_TRUE(usage->has_value());
  const AppUsage& u = **usage;
  ASSERT_EQ(u.replicas.size(), 3u);
  EXPECT_EQ(u.replicas[0].role, "ps");  // by role, then replica
  EXPECT_EQ(u.replicas[1].role, "trainer");
  EXPECT_EQ(u.replicas[1].replica_id, 0);
  EXPECT_EQ(u.replicas[1].host, *id + "-trainer-0");
  ASSERT_EQ(u.replicas[1].samples.size(), 1u);
  const UsageSample& s = u.replicas[1].samples[0];
  EXPECT_DOUBLE_EQ(s.cpu_percent.value_or(-1), 50.0);  // 0.25 s of CPU over the 0.5 s between readings
  EXPECT_EQ(s.rss_bytes, int64_t{80} << 20);           // usage less the page cache, as `docker stats`
  EXPECT_EQ(s.processes, 3);
  EXPECT_TRUE(u.replicas[2].samples.empty());
  EXPECT_THAT(u.gpu_note, HasSubstr("no GPU figures"));
  EXPECT_THAT(clock->sleeps(), ::testing::ElementsAre(std::chrono::milliseconds(500)));
  auto unknown = f.sched->ResourceUsage("nope", {});
  ASSERT_THAT(unknown, IsOk());
  EXPECT_FALSE(unknown->has_value());
}

TEST(DockerScheduler, ListsEachTorchXAppOnceWithItsState) {
  Fixture f;
  auto a = f.Run(TwoRoles());
  auto b = f.Run(TwoRoles());
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  f.Set(*b, "exited", 0);
  auto list = f.sched->List();
  ASSERT_THAT(list, IsOk());
  std::map<std::string, AppState> got;
  for (const auto& r : *list) got[r.app_id] = r.state;
  EXPECT_EQ(got, (std::map<std::string, AppState>{{*a, AppState::kRunning}, {*b, AppState::kSucceeded}}));
  // Listed by TorchX's label: containers someone else started are not asked about.
  auto lists = f.http->RequestsTo("GET", "/v1.41/containers/json");
  ASSERT_FALSE(lists.empty());
  EXPECT_EQ(Json::parse(QueryParam(lists[0].path, "filters")), (Json{{"label", Json::array({kAppIdLabel})}}));
  EXPECT_EQ(QueryParam(lists[0].path, "all"), "1");
}

TEST(DockerScheduler, TheHostIsTheEnginesWithTheRunningReplicasOnIt) {
  Fixture f;
  f.http->On("GET", "/v1.41/info", 200,
             R"({"Name": "box", "NCPU": 16, "MemTotal": 68719476736, "OperatingSystem": "Debian GNU/Linux 12"})");
  auto a = f.Run(TwoRoles());
  auto b = f.Run(TwoRoles());
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  f.Set(*b, "exited", 0);
  f.Set(*a, "exited", 0, /*replica=*/1);
  auto hosts = f.sched->Hosts();
  ASSERT_THAT(hosts, IsOk());
  ASSERT_EQ(hosts->size(), 1u);
  const HostInfo& h = hosts->front();
  EXPECT_EQ(h.name, "box");
  EXPECT_EQ(h.cpus, 16);
  EXPECT_EQ(h.memory_mb, 65536);
  ASSERT_EQ(h.apps.size(), 1u);  // b has ended
  EXPECT_EQ(h.apps[0].app_id, *a);
  EXPECT_THAT(h.apps[0].where, ::testing::UnorderedElementsAre("trainer/0", "ps/0"));
}

TEST(DockerScheduler, DeleteRemovesEveryContainerOfTheApp) {
  Fixture f;
  auto id = f.Run(TwoRoles());
  ASSERT_THAT(id, IsOk());
  ASSERT_THAT(f.sched->Delete(*id), IsOk());
  EXPECT_TRUE(f.engine.containers.empty());
  EXPECT_EQ(f.http->RequestsTo("DELETE", "/v1.41/containers/").size(), 3u);
  EXPECT_THAT(f.sched->Delete(*id), StatusIs(StatusCode::kNotFound, HasSubstr(*id)));
}

TEST(DockerScheduler, LogsAreDemultiplexedByStream) {
  Fixture f;
  auto id = f.Run(TwoRoles());
  ASSERT_THAT(id, IsOk());
  f.engine.containers[1].logs = Frame(1, "hello\nwor") + Frame(2, "oops\n") + Frame(1, "ld\n");
  auto read = [&](LogStream stream) {
    std::vector<std::string> lines;
    LogOptions o;
    o.role = "trainer";
    o.replica = 1;
    o.stream = stream;
    auto it = f.sched->LogIter(*id, o);
    EXPECT_THAT(it, IsOk());
    if (!it.ok()) return lines;
    while (true) {
      auto line = (*it)->Next();
      if (!line.ok() || !*line) break;
      lines.push_back(**line);
    }
    return lines;
  };
  EXPECT_THAT(read(LogStream::kStdout), ElementsAre("hello\n", "world\n"));
  EXPECT_THAT(read(LogStream::kStderr), ElementsAre("oops\n"));
  auto logs = f.http->RequestsTo("GET", "/v1.41/containers/c2/logs");
  ASSERT_FALSE(logs.empty());
  EXPECT_EQ(QueryParam(logs[0].path, "follow"), "0");
}

// A followed log streams on the iterator's own thread: the fake answers there too, and the
// iteration ends when the engine ends the stream (the container exited).
TEST(DockerScheduler, FollowedLogsStreamUntilTheEngineEndsTheStream) {
  Fixture f;
  auto id = f.Run(TwoRoles());
  ASSERT_THAT(id, IsOk());
  f.engine.containers[2].logs = Frame(1, "step 1\n") + Frame(2, "warn\n") + Frame(1, "done");
  LogOptions o;
  o.role = "ps";
  o.follow = true;
  auto it = f.sched->LogIter(*id, o);
  ASSERT_THAT(it, IsOk());
  // Filtered as the Runner filters every back-end's lines.
  auto filtered = FilterLogLines(std::move(*it), *LineFilter::Compile("step|done"));
  auto read = testing::ReadAllLines(*filtered);
  ASSERT_THAT(read, IsOk());
  std::vector<std::string> lines = *read;
  EXPECT_THAT(lines, ElementsAre("step 1\n", "done"));
  auto logs = f.http->RequestsTo("GET", "/v1.41/containers/c3/logs");
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(QueryParam(logs[0].path, "follow"), "1");
  LogOptions missing = o;
  missing.replica = 5;
  EXPECT_THAT(f.sched->LogIter(*id, missing), StatusIs(StatusCode::kNotFound, HasSubstr("ps/5")));
}

TEST(DockerScheduler, AnUnreachableEngineIsAClearError) {
  Fixture f;
  f.http->SetUnreachable();
  auto expect_unreachable = [](const Status& s) {
    EXPECT_EQ(s.code(), StatusCode::kUnavailable);
    EXPECT_THAT(s.message(), HasSubstr("unix:///fake/docker.sock cannot be reached"));
    EXPECT_THAT(s.message(), HasSubstr("DOCKER_HOST"));
  };
  expect_unreachable(f.Run(TwoRoles()).status());
  expect_unreachable(f.sched->Describe("train-abc").status());
  expect_unreachable(f.sched->List().status());
  expect_unreachable(f.sched->Cancel("train-abc"));
}

// The payload Schedule reads may have been edited (Python's DockerScheduler shows it as docker-py
// arguments): a malformed one is kInvalidArgument naming the field, never an exception.
TEST(DockerScheduler, AnEditedOrMalformedPayloadIsRefusedNamingTheField) {
  Fixture f;
  auto info = f.sched->SubmitDryRun(TwoRoles(), specs::Cfg{});
  ASSERT_THAT(info, IsOk());
  auto decoded = DockerRequestFromJson(info->payload);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(decoded->containers.size(), 3u);
  EXPECT_EQ(DockerRequestToJson(*decoded), info->payload);
  struct Case {
    std::string payload, field;
  };
  for (const Case& c : std::vector<Case>{
           {"{", "not a JSON object"},
           {"[]", "not a JSON object"},
           {R"({"containers":[]})", "app_id"},
           {R"({"app_id":"a","containers":[]})", "containers"},
           {R"({"app_id":"a","containers":[7]})", "containers[0]"},
           {R"({"app_id":"a","containers":[{"name":"n","config":{"Image":3}}]})", "containers[0].config.Image"},
           {R"({"app_id":"a","containers":[{"name":"","config":{"Image":"x"}}]})", "containers[0].name"},
           {R"({"app_id":"a","containers":[{"name":"n","config":"x"}]})", "containers[0].config"}}) {
    DryRunInfo edited = *info;
    edited.payload = c.payload;
    EXPECT_THAT(f.sched->Schedule(edited), StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.field))) << c.payload;
  }
  EXPECT_TRUE(f.engine.containers.empty());  // nothing was created
}

// An engine that answers with something else than the API's JSON: a clear error, not a crash.
TEST(DockerScheduler, AnswersThatAreNotTheEnginesJsonAreClearErrors) {
  Fixture f;
  f.http->On("POST", "/v1.41/containers/create", 201, "<html>created</html>");
  EXPECT_THAT(f.Run(TwoRoles()), StatusIs(StatusCode::kUnavailable, HasSubstr("no JSON object: <html>created")));
  Fixture list;
  list.http->On("GET", "/v1.41/containers/json", 200, "not json");
  EXPECT_THAT(list.sched->Describe("train-abc"), StatusIs(StatusCode::kUnavailable, HasSubstr("no JSON list")));
  // Fields of other types than the API's: read as missing.
  Fixture odd;
  odd.http->On("GET", "/v1.41/containers/json", 200,
               R"([{"Id":5,"Names":"x","Labels":{"torchx.pytorch.org/app-id":"a","torchx.pytorch.org/replica-id":7},)"
               R"("State":[]}, 3, "s"])");
  odd.http->On("GET", "/v1.41/containers/", 200, R"({"State":"exited","RestartCount":"2","HostConfig":[]})");
  auto d = odd.sched->Describe("a");
  ASSERT_THAT(d, IsOk());
  ASSERT_TRUE(d->has_value());
  EXPECT_EQ((*d)->state, AppState::kUnknown);
  EXPECT_THAT(odd.sched->List(), IsOk());
  EXPECT_THAT(odd.sched->Cancel("a"), IsOk());
}

// A managed job's view of how containers end, gravest first.
TEST(ClassifyContainerEnds, EachEnd) {
  auto one = [](int64_t code, bool oom = false, bool cancelled = false, std::string error = "") {
    return std::vector<ContainerEnd>{{"trainer/0", code, oom, cancelled, std::move(error)}};
  };
  EXPECT_EQ(ClassifyContainerEnds(one(1)).cause, FailureCause::kUserError);
  EXPECT_EQ(ClassifyContainerEnds(one(1)).reason, "trainer/0 exited with code 1");
  EXPECT_EQ(ClassifyContainerEnds(one(137, true)).cause, FailureCause::kOutOfMemory);
  EXPECT_EQ(ClassifyContainerEnds(one(137)).cause, FailureCause::kCancelled);
  EXPECT_THAT(ClassifyContainerEnds(one(143)).reason, HasSubstr("docker kill or docker stop"));
  EXPECT_EQ(ClassifyContainerEnds(one(137, false, true)).cause, FailureCause::kCancelled);
  EXPECT_EQ(ClassifyContainerEnds(one(0, false, false, "mount failed")).cause, FailureCause::kEngineLost);
  EXPECT_EQ(ClassifyContainerEnds(one(0)).cause, FailureCause::kUnknown);
  // A replica's own exit explains its siblings the launcher stopped.
  std::vector<ContainerEnd> both = {{"trainer/0", 137, false, true, ""}, {"trainer/1", 2, false, false, ""}};
  EXPECT_EQ(ClassifyContainerEnds(both).reason, "trainer/1 exited with code 2");
}

}  // namespace
}  // namespace torchx::schedulers::docker
