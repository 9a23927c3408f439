#include "components/python_component.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "torchx/components/component_json.h"
#include "torchx/specs/serialize.h"

extern char** environ;

namespace torchx::components::internal {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// The fd the child writes replies to (stdout stays the component's own).
constexpr int kReplyFd = 3;

std::string FindPython() {
  if (const char* env = std::getenv("TORCHX_PYTHON"); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path beside = exe.parent_path() / "python3";
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return "python3";
}

// One child interpreter; requests and replies are JSON lines.
class Bridge {
 public:
  ~Bridge() {
    if (to_child_) std::fclose(to_child_);
    if (from_child_) std::fclose(from_child_);
    if (pid_ > 0) {
      int st = 0;
      while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
      }
    }
  }

  Status Start() {
    int req[2], rep[2];
    if (::pipe2(req, O_CLOEXEC) != 0) return Errno("pipe");
    if (::pipe2(rep, O_CLOEXEC) != 0) {
      ::close(req[0]);
      ::close(req[1]);
      return Errno("pipe");
    }
    python_ = FindPython();
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, req[0], 0);
    posix_spawn_file_actions_adddup2(&fa, rep[1], kReplyFd);
    posix_spawn_file_actions_adddup2(&fa, 2, 1);  // the component's prints go to our stderr
    std::vector<std::string> env_strings;
    std::vector<char*> envp;
    for (char** e = environ; *e; ++e) {
      if (std::strncmp(*e, "TORCHX_BRIDGE_FD=", 17) != 0) envp.push_back(*e);
    }
    env_strings.push_back(fmt::format("TORCHX_BRIDGE_FD={}", kReplyFd));
    envp.push_back(env_strings.back().data());
    envp.push_back(nullptr);
    std::vector<std::string> args = {python_, "-u", "-m", "torchx.components._bridge"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int rc = ::posix_spawnp(&pid_, python_.c_str(), &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(req[0]);
    ::close(rep[1]);
    if (rc != 0) {
      pid_ = -1;
      ::close(req[1]);
      ::close(rep[0]);
      return FailedPreconditionError(
          fmt::format("Python components need a Python interpreter: cannot start {}: {} (set TORCHX_PYTHON)",
                      python_, std::strerror(rc)));
    }
    to_child_ = ::fdopen(req[1], "w");
    from_child_ = ::fdopen(rep[0], "r");
    return OkStatus();
  }

  Result<Json> Call(const Json& request) {
    std::string line = request.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
    bool sent = std::fwrite(line.data(), 1, line.size(), to_child_) == line.size() && std::fflush(to_child_) == 0;
    std::string reply;
    char buf[65536];
    while (sent && std::fgets(buf, sizeof buf, from_child_)) {
      reply += buf;
      if (!reply.empty() && reply.back() == '\n') break;
    }
    if (reply.empty()) {
      return FailedPreconditionError(fmt::format(
          "Python components need the torchx Python package: `{} -m torchx.components._bridge` exited "
          "without answering (see its error above; install the package with `pip install .` or set TORCHX_PYTHON)",
          python_));
    }
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
  static Status Errno(const char* what) {
    return InternalError(fmt::format("python component bridge: {}: {}", what, std::strerror(errno)));
  }

  std::string python_;
  pid_t pid_ = -1;
  FILE* to_child_ = nullptr;
  FILE* from_child_ = nullptr;
};

class PythonComponent : public Component {
 public:
  PythonComponent(ComponentSpec spec, std::unique_ptr<Bridge> bridge, std::string origin)
      : spec_(std::move(spec)), bridge_(std::move(bridge)), origin_(std::move(origin)) {}

  const ComponentSpec& spec() const override { return spec_; }
  std::string origin() const override { return origin_; }

  Result<specs::AppDef> Build(const ComponentArgs& args) const override {
    Json request = Json::parse(ComponentArgsToJson(args));
    request["op"] = "build";
    TORCHX_ASSIGN_OR_RETURN(Json reply, bridge_->Call(request));
    if (!reply.contains("app")) return InternalError("python component bridge: reply without an app");
    return specs::AppDefFromJson(reply["app"].dump(-1, ' ', false, Json::error_handler_t::replace));
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
