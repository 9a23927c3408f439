#include "container_engine/workspace_image.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <re2/re2.h>

#include "container_engine/build_context.h"
#include "core/strings.h"

namespace torchx::container_engine {
namespace {

using Json = nlohmann::json;

constexpr const char* kDockerHubAuthKey = "https://index.docker.io/v1/";

// The engine answers builds and pushes with a stream of JSON messages, one per line; a failure
// after the stream started is a message with "error" (HTTP status stays 200).
struct EngineMessages {
  std::vector<Json> messages;
  std::string error;
};

EngineMessages ReadMessages(const std::string& body) {
  EngineMessages out;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    Json m = Json::parse(line, nullptr, false);
    if (!m.is_object()) continue;
    if (m.contains("error")) out.error = m["error"].is_string() ? m["error"].get<std::string>() : m["error"].dump();
    out.messages.push_back(std::move(m));
  }
  return out;
}

// "host", "https://host", "https://host/v1/" all name the registry `host`.
std::string AuthKeyHost(std::string key) {
  if (auto scheme = key.find("://"); scheme != std::string::npos) key = key.substr(scheme + 3);
  return key.substr(0, key.find('/'));
}

std::string DockerConfigPath() {
  if (const char* dir = std::getenv("DOCKER_CONFIG"); dir && *dir) return std::string(dir) + "/config.json";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.docker/config.json";
}

}  // namespace

std::FILE* BuildLogFor(bool quiet) { return quiet ? nullptr : stderr; }

Result<std::string> BuildWorkspaceImage(const EngineClient& engine, const std::string& workspace,
                                        const std::string& base_image, std::string_view who, std::FILE* build_log) {
  TORCHX_ASSIGN_OR_RETURN(BuildContext ctx, MakeBuildContext(workspace, base_image));
  std::string args = Json{{"IMAGE", base_image}, {"WORKSPACE", workspace}}.dump();
  if (build_log) {
    std::fprintf(build_log, "%.*s: building the workspace %s on %s (this may take a while)\n",
                 static_cast<int>(who.size()), who.data(), workspace.c_str(), base_image.c_str());
  }
  std::string path = fmt::format("/build?dockerfile={}&buildargs={}&rm=1&forcerm=1&pull=0&q={}",
                                 UrlEncode(ctx.dockerfile), UrlEncode(args), build_log ? 0 : 1);
  TORCHX_ASSIGN_OR_RETURN(auto resp, engine.Request("POST", path, ctx.tar, 600000, "application/x-tar"));
  EngineMessages read = ReadMessages(resp.body);
  // The image's id, best first: the engine's aux message (docker: the full "sha256:<hex>"), a quiet
  // build's one line (docker: "sha256:<hex>", podman: "<hex>"), a verbose build's "Successfully
  // built <short id>" (docker's classic builder, which prints no aux message).
  std::string aux_id, quiet_id, built_id;
  for (const Json& m : read.messages) {
    if (m.contains("aux") && m["aux"].is_object()) aux_id = m["aux"].value("ID", aux_id);
    if (!m.contains("stream") || !m["stream"].is_string()) continue;
    std::string text = m["stream"];
    if (build_log) {  // the engine's own lines (steps, their output), trimmed as TorchX logs them
      auto first = text.find_first_not_of(" \t\r\n");
      auto last = text.find_last_not_of(" \t\r\n");
      if (first != std::string::npos) std::fprintf(build_log, "%s\n", text.substr(first, last - first + 1).c_str());
    }
    static const re2::RE2 kId(R"(\s*((?:sha256:)?[0-9a-f]{64})\s*)");
    if (std::string found; re2::RE2::FullMatch(text, kId, &found)) quiet_id = found;
    if (auto pos = text.find("Successfully built "); pos != std::string::npos) {
      built_id = text.substr(pos + 19, text.find_first_of("\r\n", pos) - pos - 19);
    }
  }
  std::string id = !aux_id.empty() ? aux_id : !quiet_id.empty() ? quiet_id : built_id;
  if (resp.status >= 300 || !read.error.empty() || id.empty()) {
    return FailedPreconditionError(fmt::format("{}: building the workspace {} on `{}` failed (HTTP {}): {}", who,
                                               workspace, base_image, resp.status,
                                               read.error.empty() ? resp.body.substr(0, 500) : read.error));
  }
  if (aux_id.empty() && quiet_id.empty()) {  // a short id: the engine's inspect gives the whole one
    TORCHX_ASSIGN_OR_RETURN(auto inspected, engine.Request("GET", fmt::format("/images/{}/json", UrlEncode(id))));
    Json image = Json::parse(inspected.body, nullptr, false);
    if (inspected.status < 300 && image.is_object() && image.value("Id", "").size() >= 64) id = image["Id"];
  }
  return id;
}

Status TagImage(const EngineClient& engine, const std::string& image, const std::string& repo, const std::string& tag,
                std::string_view who) {
  TORCHX_ASSIGN_OR_RETURN(
      auto resp, engine.Request("POST", fmt::format("/images/{}/tag?repo={}&tag={}", UrlEncode(image), UrlEncode(repo),
                                                    UrlEncode(tag))));
  if (resp.status >= 300) {
    return FailedPreconditionError(fmt::format("{}: tagging image {} as {}:{} failed (HTTP {}): {}", who, image, repo,
                                               tag, resp.status, resp.body.substr(0, 500)));
  }
  return OkStatus();
}

Status CheckImageRepo(std::string_view repo, std::string_view option, std::string_view who) {
  if (repo.empty()) {
    return InvalidArgumentError(fmt::format(
        "{}: a workspace image needs the run option `{}`, the repository it is pushed to and the cluster pulls from "
        "(e.g. -cfg {}=registry.example.com/team/trainer)",
        who, option, option));
  }
  // A repository without tag or digest, lower case as registries require (host part aside).
  static const re2::RE2 kRepo(
      R"(([A-Za-z0-9.-]+(:[0-9]+)?/)?[a-z0-9]+([._-]+[a-z0-9]+)*(/[a-z0-9]+([._-]+[a-z0-9]+)*)*)");
  if (!re2::RE2::FullMatch(re2::StringPiece(repo.data(), repo.size()), kRepo)) {
    return InvalidArgumentError(fmt::format(
        "{}: {} `{}` is not an image repository (lower-case [host[:port]/]path, no tag or digest)", who, option, repo));
  }
  return OkStatus();
}

Result<std::set<std::string>> BuildWorkspaceImagesFor(const EngineClient& engine, const std::string& workspace,
                                                      const std::string& repo, specs::AppDef& app, std::string_view who,
                                                      std::FILE* build_log) {
  std::map<std::string, std::string> built;  // base image -> pushed name
  std::set<std::string> push;
  for (specs::Role& role : app.roles) {
    if (auto it = built.find(role.image); it == built.end()) {
      TORCHX_ASSIGN_OR_RETURN(std::string id, BuildWorkspaceImage(engine, workspace, role.image, who, build_log));
      std::string tag = id.rfind("sha256:", 0) == 0 ? id.substr(7) : id;  // TorchX's tag: the image id's hash
      TORCHX_RETURN_IF_ERROR(TagImage(engine, id, repo, tag, who));
      built[role.image] = repo + ":" + tag;
    }
    role.image = built[role.image];
    push.insert(role.image);
  }
  return push;
}

std::string RegistryHostOf(std::string_view repo) {
  auto slash = repo.find('/');
  if (slash == std::string_view::npos) return "docker.io";
  std::string_view first = repo.substr(0, slash);
  bool is_host =
      first.find('.') != std::string_view::npos || first.find(':') != std::string_view::npos || first == "localhost";
  return is_host ? std::string(first) : "docker.io";
}

Result<std::string> RegistryAuthFor(std::string_view repo, std::string_view docker_config_json) {
  Json config = Json::parse(docker_config_json, nullptr, false);
  if (!config.is_object()) return InvalidArgumentError("docker config: not a JSON object");
  if (!config.contains("auths")) return std::string("{}");
  if (!config["auths"].is_object()) return InvalidArgumentError("docker config: `auths` is not an object");
  std::string host = RegistryHostOf(repo);
  for (const auto& item : config["auths"].items()) {
    const std::string& key = item.key();
    const Json& entry = item.value();  // a plain reference: lambdas below capture it (clang 14 cannot capture bindings)
    bool hub_key = key == kDockerHubAuthKey || AuthKeyHost(key) == "index.docker.io";
    if (!(host == "docker.io" ? hub_key : AuthKeyHost(key) == host) || !entry.is_object()) continue;
    Json auth = {{"serveraddress", host == "docker.io" ? std::string(kDockerHubAuthKey) : host}};
    auto str = [&entry](const char* k) {
      return entry.contains(k) && entry[k].is_string() ? entry[k].get<std::string>() : std::string();
    };
    if (std::string token = str("identitytoken"); !token.empty()) {
      auth["identitytoken"] = token;
    } else if (std::string b64 = str("auth"); !b64.empty()) {
      auto decoded = internal::Base64Decode(b64);
      auto colon = decoded ? decoded->find(':') : std::string::npos;
      if (colon == std::string::npos) {
        return InvalidArgumentError(
            fmt::format("docker config: auths[\"{}\"].auth is not base64 of user:password", key));
      }
      auth["username"] = decoded->substr(0, colon);
      auth["password"] = decoded->substr(colon + 1);
    } else {
      auth["username"] = str("username");
      auth["password"] = str("password");
    }
    return auth.dump();
  }
  return std::string("{}");
}

Status PushImage(const EngineClient& engine, const std::string& repo, const std::string& tag, std::string_view who) {
  std::string auth = "{}";
  std::string config_path = DockerConfigPath();
  if (std::ifstream f(config_path); f) {
    std::stringstream text;
    text << f.rdbuf();
    auto read = RegistryAuthFor(repo, text.str());
    if (!read.ok()) return InvalidArgumentError(fmt::format("{}: {}: {}", who, config_path, read.error().message()));
    auth = *read;
  }
  // The engine wants the header even for registries without auth; it travels base64url-encoded.
  TORCHX_ASSIGN_OR_RETURN(
      auto resp, engine.Request("POST", fmt::format("/images/{}/push?tag={}", UrlEncode(repo), UrlEncode(tag)), "",
                                1800000, "application/json", {"X-Registry-Auth: " + internal::Base64UrlEncode(auth)}));
  EngineMessages read = ReadMessages(resp.body);
  if (resp.status >= 300 || !read.error.empty()) {
    std::string reason = read.error.empty() ? resp.body.substr(0, 500) : read.error;
    static const re2::RE2 kAuthProblem("(?i)unauthorized|denied|authenticat");
    std::string hint = re2::RE2::PartialMatch(reason, kAuthProblem)
                           ? fmt::format(
                                 " (credentials come from the auths that `docker login` writes to {}; "
                                 "credential helpers are not consulted)",
                                 config_path)
                           : "";
    return FailedPreconditionError(fmt::format("{}: pushing image {}:{} to {} failed (HTTP {}): {}{}", who, repo, tag,
                                               RegistryHostOf(repo), resp.status, reason, hint));
  }
  return OkStatus();
}

}  // namespace torchx::container_engine
