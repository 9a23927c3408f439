#include "schedulers/kubernetes/kube_config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "core/subprocess.h"

namespace torchx::schedulers::kubernetes {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

// One named entry (cluster, user or context) and the directory of the file it came from.
struct Entry {
  YAML::Node node;
  std::string dir;
  std::string file;
};

struct Merged {
  std::map<std::string, Entry> clusters, users, contexts;
  std::string current_context;
  std::vector<std::string> files;
};

Result<std::string> ReadFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return FailedPreconditionError(fmt::format("kubeconfig: cannot read {} `{}`", what, path));
  std::stringstream b;
  b << in.rdbuf();
  return b.str();
}

std::string Resolve(const std::string& path, const std::string& dir) {
  if (path.empty() || fs::path(path).is_absolute() || dir.empty()) return path;
  return (fs::path(dir) / path).string();
}

std::string Str(const YAML::Node& n, const char* key) {
  const YAML::Node v = n[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

Status MergeFile(const std::string& yaml, const std::string& file, const std::string& dir, Merged& m) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    return FailedPreconditionError(fmt::format("kubeconfig {}: not YAML: {}", file, e.what()));
  }
  if (!root || root.IsNull()) return OkStatus();
  if (!root.IsMap()) return FailedPreconditionError(fmt::format("kubeconfig {}: not a mapping", file));
  m.files.push_back(file);
  auto merge = [&](const char* list, const char* field, std::map<std::string, Entry>& into) -> Status {
    const YAML::Node items = root[list];
    if (!items) return OkStatus();
    if (!items.IsSequence())
      return FailedPreconditionError(fmt::format("kubeconfig {}: `{}` is not a list", file, list));
    for (const YAML::Node& item : items) {
      std::string name = item.IsMap() ? Str(item, "name") : "";
      if (name.empty() || !item[field] || !item[field].IsMap()) {
        return FailedPreconditionError(
            fmt::format("kubeconfig {}: every entry of `{}` needs a `name` and a `{}` mapping", file, list, field));
      }
      into.emplace(name, Entry{item[field], dir, file});  // the first file to name it wins
    }
    return OkStatus();
  };
  try {
    TORCHX_RETURN_IF_ERROR(merge("clusters", "cluster", m.clusters));
    TORCHX_RETURN_IF_ERROR(merge("users", "user", m.users));
    TORCHX_RETURN_IF_ERROR(merge("contexts", "context", m.contexts));
    if (m.current_context.empty()) m.current_context = Str(root, "current-context");
  } catch (const YAML::Exception& e) {
    return FailedPreconditionError(fmt::format("kubeconfig {}: {}", file, e.what()));
  }
  return OkStatus();
}

// A *-data field (base64 PEM) or its file twin, into the transport's pem/file pair.
Status CertField(const YAML::Node& n, const std::string& key, const Entry& e, std::string& pem, std::string& file) {
  if (std::string data = Str(n, (key + "-data").c_str()); !data.empty()) {
    auto decoded = internal::Base64Decode(data);
    if (!decoded) return FailedPreconditionError(fmt::format("kubeconfig {}: `{}-data` is not base64", e.file, key));
    pem = *decoded;
  } else if (std::string path = Str(n, key.c_str()); !path.empty()) {
    file = Resolve(path, e.dir);
    if (!fs::exists(file)) {
      return FailedPreconditionError(fmt::format("kubeconfig {}: `{}` file `{}` does not exist", e.file, key, file));
    }
  }
  return OkStatus();
}

// Runs a client.authentication.k8s.io exec plugin and takes the credential it prints.
Status RunExecPlugin(const YAML::Node& exec, const Entry& e, const std::string& user, internal::CommandRunner& runner,
                     KubeConnection& c) {
  std::string command = Str(exec, "command");
  if (command.empty())
    return FailedPreconditionError(fmt::format("kubeconfig {}: user `{}`: exec has no command", e.file, user));
  std::string api = Str(exec, "apiVersion");
  if (api.empty()) api = "client.authentication.k8s.io/v1";
  std::vector<std::string> argv = {
      "env", "KUBERNETES_EXEC_INFO=" +
                 Json{{"apiVersion", api}, {"kind", "ExecCredential"}, {"spec", {{"interactive", false}}}}.dump()};
  for (const YAML::Node& kv : exec["env"]) argv.push_back(Str(kv, "name") + "=" + Str(kv, "value"));
  // A bare command name is looked up on PATH; a relative path is relative to the kubeconfig.
  argv.push_back(command.find('/') == std::string::npos ? command : Resolve(command, e.dir));
  for (const YAML::Node& a : exec["args"]) argv.push_back(a.as<std::string>());
  TORCHX_ASSIGN_OR_RETURN(auto res, runner.Run(argv, {}, std::chrono::seconds(60)));
  if (res.exit_code != 0) {
    return FailedPreconditionError(fmt::format("kubeconfig {}: user `{}`: exec plugin `{}` exited {}: {}", e.file, user,
                                               command, res.exit_code, internal::Strip(res.err)));
  }
  Json cred = Json::parse(res.out, nullptr, false);
  Json status = cred.is_object() ? cred.value("status", Json::object()) : Json();
  if (!status.is_object()) {
    return FailedPreconditionError(
        fmt::format("kubeconfig {}: user `{}`: exec plugin `{}` did not print an ExecCredential with a status", e.file,
                    user, command));
  }
  if (std::string token = status.value("token", ""); !token.empty()) {
    c.transport.headers.push_back("Authorization: Bearer " + token);
  }
  c.transport.client_cert_pem = status.value("clientCertificateData", c.transport.client_cert_pem);
  c.transport.client_key_pem = status.value("clientKeyData", c.transport.client_key_pem);
  return OkStatus();
}

Status ApplyUser(const YAML::Node& u, const Entry& e, const std::string& name, internal::CommandRunner* exec_runner,
                 KubeConnection& c) {
  TORCHX_RETURN_IF_ERROR(
      CertField(u, "client-certificate", e, c.transport.client_cert_pem, c.transport.client_cert_file));
  TORCHX_RETURN_IF_ERROR(CertField(u, "client-key", e, c.transport.client_key_pem, c.transport.client_key_file));
  std::string token = Str(u, "token");
  if (std::string file = Str(u, "tokenFile"); token.empty() && !file.empty()) {
    TORCHX_ASSIGN_OR_RETURN(token, ReadFile(Resolve(file, e.dir), "tokenFile"));
    token = std::string(internal::Strip(token));
  }
  if (!token.empty()) c.transport.headers.push_back("Authorization: Bearer " + token);
  if (std::string user = Str(u, "username"); !user.empty()) c.transport.user_password = user + ":" + Str(u, "password");
  if (u["auth-provider"]) {
    return FailedPreconditionError(fmt::format(
        "kubeconfig {}: user `{}` uses an auth-provider (`{}`), which kubectl itself dropped; use an exec plugin or a "
        "token",
        e.file, name, Str(u["auth-provider"], "name")));
  }
  if (const YAML::Node exec = u["exec"]; exec && exec.IsMap()) {
    if (!exec_runner) {
      return FailedPreconditionError(
          fmt::format("kubeconfig {}: user `{}` authenticates with the exec plugin `{}`, which runs a command; exec "
                      "plugins are off "
                      "by default: set TORCHX_KUBERNETES_ALLOW_EXEC=1 to run it",
                      e.file, name, Str(exec, "command")));
    }
    TORCHX_RETURN_IF_ERROR(RunExecPlugin(exec, e, name, *exec_runner, c));
  }
  return OkStatus();
}

Result<KubeConnection> ReadMerged(const Merged& m, const KubeConfigOptions& o) {
  std::string sources = fmt::format("{}", fmt::join(m.files, ":"));
  std::string ctx_name = o.context.empty() ? m.current_context : o.context;
  if (ctx_name.empty()) {
    return FailedPreconditionError(
        fmt::format("kubeconfig {}: no current-context (set one, or pass a context)", sources));
  }
  auto ctx = m.contexts.find(ctx_name);
  if (ctx == m.contexts.end()) {
    std::vector<std::string> names;
    for (const auto& [n, _] : m.contexts) names.push_back(n);
    return FailedPreconditionError(fmt::format("kubeconfig {}: no context `{}`; contexts: {}", sources, ctx_name,
                                               names.empty() ? "(none)" : fmt::format("{}", fmt::join(names, ", "))));
  }
  KubeConnection c;
  c.context = ctx_name;
  c.source = sources;
  std::string ns = Str(ctx->second.node, "namespace");
  if (!ns.empty()) c.namespace_ = ns;
  std::string cluster_name = Str(ctx->second.node, "cluster");
  auto cluster = m.clusters.find(cluster_name);
  if (cluster == m.clusters.end()) {
    return FailedPreconditionError(fmt::format("kubeconfig {}: context `{}` names cluster `{}`, which is not defined",
                                               sources, ctx_name, cluster_name));
  }
  const YAML::Node& cl = cluster->second.node;
  c.server = Str(cl, "server");
  while (c.server.ends_with('/')) c.server.pop_back();
  if (c.server.empty()) {
    return FailedPreconditionError(
        fmt::format("kubeconfig {}: cluster `{}` has no server", cluster->second.file, cluster_name));
  }
  if (!Str(cl, "tls-server-name").empty() || !Str(cl, "proxy-url").empty()) {
    return FailedPreconditionError(
        fmt::format("kubeconfig {}: cluster `{}` sets tls-server-name or proxy-url, which torchx does not support yet",
                    cluster->second.file, cluster_name));
  }
  c.transport.insecure_skip_verify = Str(cl, "insecure-skip-tls-verify") == "true";
  TORCHX_RETURN_IF_ERROR(
      CertField(cl, "certificate-authority", cluster->second, c.transport.ca_pem, c.transport.ca_file));
  std::string user_name = Str(ctx->second.node, "user");
  if (!user_name.empty()) {
    auto user = m.users.find(user_name);
    if (user == m.users.end()) {
      return FailedPreconditionError(fmt::format("kubeconfig {}: context `{}` names user `{}`, which is not defined",
                                                 sources, ctx_name, user_name));
    }
    TORCHX_RETURN_IF_ERROR(ApplyUser(user->second.node, user->second, user_name, o.exec, c));
  }
  return c;
}

// A field of an unexpected shape (a list where a string belongs, an exec env that is a map) makes
// yaml-cpp throw: an error naming the files, never an exception out of the scheduler.
Result<KubeConnection> FromMerged(const Merged& m, const KubeConfigOptions& o) {
  try {
    return ReadMerged(m, o);
  } catch (const YAML::Exception& e) {
    return FailedPreconditionError(
        fmt::format("kubeconfig {}: a field has the wrong shape: {}", fmt::join(m.files, ":"), e.what()));
  }
}

// Inside a pod: the API server from the service's env, the service account's token and CA.
Result<KubeConnection> InCluster() {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  KubeConnection c;
  std::string h = host;
  c.server = fmt::format("https://{}:{}", h.find(':') != std::string::npos ? "[" + h + "]" : h, port ? port : "443");
  c.context = "in-cluster";
  c.source = kServiceAccountDir;
  TORCHX_ASSIGN_OR_RETURN(std::string token,
                          ReadFile(fmt::format("{}/token", kServiceAccountDir), "service account token"));
  c.transport.headers.push_back("Authorization: Bearer " + std::string(internal::Strip(token)));
  c.transport.ca_file = fmt::format("{}/ca.crt", kServiceAccountDir);
  if (auto ns = ReadFile(fmt::format("{}/namespace", kServiceAccountDir), "namespace"); ns.ok()) {
    c.namespace_ = std::string(internal::Strip(*ns));
  }
  return c;
}

}  // namespace

Result<KubeConnection> KubeConfigFromYaml(const std::string& yaml, const std::string& dir, const KubeConfigOptions& o) {
  Merged m;
  TORCHX_RETURN_IF_ERROR(MergeFile(yaml, "<kubeconfig>", dir, m));
  return FromMerged(m, o);
}

Result<KubeConnection> LoadKubeConfig(const KubeConfigOptions& o) {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    for (const std::string& p : internal::SplitAny(env, ":")) {
      if (!p.empty()) paths.push_back(p);
    }
  } else if (const char* home = std::getenv("HOME"); home && fs::exists(fs::path(home) / ".kube" / "config")) {
    paths.push_back((fs::path(home) / ".kube" / "config").string());
  }
  Merged m;
  for (const std::string& p : paths) {
    if (!fs::exists(p)) continue;  // kubectl skips missing files in the list
    TORCHX_ASSIGN_OR_RETURN(std::string text, ReadFile(p, "file"));
    TORCHX_RETURN_IF_ERROR(MergeFile(text, p, fs::path(p).parent_path().string(), m));
  }
  if (m.files.empty()) {
    if (std::getenv("KUBERNETES_SERVICE_HOST") && o.context.empty()) return InCluster();
    return FailedPreconditionError(
        paths.empty() ? std::string("kubernetes: no kubeconfig: set KUBECONFIG=<file> or create ~/.kube/config")
                      : fmt::format("kubernetes: no kubeconfig among KUBECONFIG={}", fmt::join(paths, ":")));
  }
  return FromMerged(m, o);
}

}  // namespace torchx::schedulers::kubernetes
