// Ray packages: the zip files a job's runtime_env names (`gcs://_ray_pkg_<hash>.zip`), built here
// and uploaded through the Job Submission API (PUT /api/packages/gcs/<name>). The same files
// give the same bytes and so the same name: an unchanged working directory is uploaded once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "torchx/status.h"

namespace torchx::schedulers::ray {

/// One file of a package: its path in the archive ('/'-separated) and where its bytes come from.
struct PackageFile {
  std::string archive_path;
  std::string disk_path;  ///< read from here when non-empty
  std::string contents;   ///< else these bytes
  bool executable = false;
};

/// The files of `dir` (recursively; symlinked files followed, symlinked directories not), minus
/// what `dir`/.torchxignore excludes (TorchX's workspace rules), with archive paths relative to
/// `dir` under `prefix` ("" or "name/"). kInvalidArgument naming `dir` when it is not a directory.
Result<std::vector<PackageFile>> DirectoryFiles(const std::string& dir, const std::string& prefix = "");

/// The zip of `files`, deterministic (sorted, fixed times). kInternal naming the file it could not read.
Result<std::string> ZipPackage(std::vector<PackageFile> files);

/// "gcs://_ray_pkg_<first 32 hex digits of the SHA-256 of `zip`>.zip".
std::string PackageUri(std::string_view zip);
/// The package's name in the packages API: the URI without "gcs://".
std::string PackageName(std::string_view uri);

}  // namespace torchx::schedulers::ray
