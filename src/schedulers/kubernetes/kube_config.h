// Where the Kubernetes API server is and how to authenticate to it, read from kubeconfig files
// the way kubectl reads them: $KUBECONFIG (a ':'-separated list, merged: the first file to name
// a cluster, user, context or current-context wins) else ~/.kube/config, else the in-cluster
// service account. Certificates and keys as files or base64 *-data, bearer tokens (token,
// tokenFile), basic auth, and exec credential plugins, which run a command and so are off unless
// TORCHX_KUBERNETES_ALLOW_EXEC=1.
#pragma once

#include <string>

#include "core/subprocess.h"
#include "http/http.h"
#include "torchx/status.h"

namespace torchx::schedulers::kubernetes {

struct KubeConnection {
  std::string server;                  ///< e.g. https://127.0.0.1:6443 (no trailing '/')
  std::string namespace_ = "default";  ///< the context's namespace
  std::string context;                 ///< context name, for messages
  std::string source;                  ///< the files read, for messages
  internal::HttpTransport transport;
};

struct KubeConfigOptions {
  std::string context;  ///< empty: current-context
  /// Runs exec credential plugins; null: they are off (the scheduler passes the system's runner
  /// when $TORCHX_KUBERNETES_ALLOW_EXEC is "1"). Not owned.
  internal::CommandRunner* exec = nullptr;
};

/// kFailedPrecondition naming the file and field when nothing usable is found, a context, cluster
/// or user is missing, a file cannot be read, or an exec plugin is met while exec is off.
Result<KubeConnection> LoadKubeConfig(const KubeConfigOptions& options);

/// The same from kubeconfig text (tests, and one file): `dir` resolves relative paths.
Result<KubeConnection> KubeConfigFromYaml(const std::string& yaml, const std::string& dir,
                                          const KubeConfigOptions& options);

}  // namespace torchx::schedulers::kubernetes
