// The `job_dir` workspace of the slurm scheduler (TorchX's DirWorkspaceMixin): the submitting
// directory copied into a new job_dir, minus what `.torchxignore` excludes (dockerignore-style:
// fnmatch patterns on paths relative to the workspace, `!` re-includes, `#` comments; a matching
// directory is skipped whole).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/ignore_patterns.h"
#include "torchx/status.h"

namespace torchx::schedulers::slurm {

using ::torchx::internal::IsIgnored;

/// kAlreadyExists if `job_dir` exists (TorchX requires a new directory). A job_dir inside the
/// workspace is not copied into itself.
Status CopyWorkspace(const std::filesystem::path& workspace, const std::string& job_dir);

}  // namespace torchx::schedulers::slurm
