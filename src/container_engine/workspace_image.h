// Workspace images through a container engine's API, shared by the back-ends that run images:
// TorchX's docker workspace (an image built from a local directory on top of a role's image),
// and, for back-ends whose nodes pull from a registry (kubernetes), tagging and pushing it.
#pragma once

#include <cstdio>
#include <set>
#include <string>
#include <string_view>

#include "container_engine/engine_client.h"
#include "torchx/specs/app_def.h"
#include "torchx/status.h"

namespace torchx::container_engine {

/// Builds `workspace` on top of `base_image` (Dockerfile.torchx with the build args IMAGE and
/// WORKSPACE, else `FROM <image>` + `COPY . .`; .dockerignore honoured; never pulls). Returns the
/// engine's id of the new image (docker: "sha256:<hex>", podman: "<hex>"). `who` names the
/// back-end in errors. `build_log`: where the engine's build output goes, line by line, as TorchX's
/// docker workspace logs it (null: a quiet build, the run option `quiet=true`).
Result<std::string> BuildWorkspaceImage(const EngineClient& engine, const std::string& workspace,
                                        const std::string& base_image, std::string_view who, std::FILE* build_log);

/// kInvalidArgument naming `option` unless `repo` is an image repository a registry takes: lower
/// case [host[:port]/]path, no tag or digest (an empty one: "needs the run option").
Status CheckImageRepo(std::string_view repo, std::string_view option, std::string_view who);

/// TorchX's docker workspace for a cluster that pulls from a registry: each distinct role image
/// rebuilt with `workspace` on top, tagged `<repo>:<image id's hash>`, and the roles pointed at
/// it. Returns the names to push (`repo:tag`) before the job is sent.
Result<std::set<std::string>> BuildWorkspaceImagesFor(const EngineClient& engine, const std::string& workspace,
                                                      const std::string& repo, specs::AppDef& app, std::string_view who,
                                                      std::FILE* build_log);

/// Where a back-end's workspace build writes its output: stderr, unless the run option `quiet`
/// (TorchX's docker workspace option) is true.
std::FILE* BuildLogFor(bool quiet);

/// Tags the local `image` as `repo:tag`.
Status TagImage(const EngineClient& engine, const std::string& image, const std::string& repo, const std::string& tag,
                std::string_view who);

/// Pushes `repo:tag` through the engine, with the credentials docker's config.json holds for the
/// repository's registry ($DOCKER_CONFIG, else ~/.docker; what `docker login` writes).
/// kFailedPrecondition naming the image and the registry's reason when the push fails.
Status PushImage(const EngineClient& engine, const std::string& repo, const std::string& tag, std::string_view who);

/// The registry host of an image repository: its first path part when that names a host
/// ("registry.example.com/team/x", "127.0.0.1:5000/x", "localhost/x"), else Docker Hub.
std::string RegistryHostOf(std::string_view repo);

/// The X-Registry-Auth JSON for `repo` from the text of a docker config.json: its `auths` entry
/// for the repository's registry ("auth" = base64 user:password, or username/password, or
/// identitytoken), "{}" when there is none. kInvalidArgument when the text is not a config.
Result<std::string> RegistryAuthFor(std::string_view repo, std::string_view docker_config_json);

}  // namespace torchx::container_engine
