// Which component files the dashboard may load. Loading a component named by a path
// (`dir/train.py:main`, `./app.yaml`) runs or reads that file as the server's user, so a request
// for one needs the token or the page's CSRF token (security.h), and the file must lie in the
// server's working directory or a directory `torchx ui --component_dir` allows: a page cannot
// have the server import any `.py` on the machine. Registered names (`dist.ddp`) and importable
// modules (`pkg.module:fn`) are the installed code's, not a path's.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "torchx/status.h"

namespace torchx::ui {

/// Whether `name` names a component by a file path (what the checks below are for).
bool NamesComponentFile(std::string_view name);

/// Whether loading `name` runs code the request chose: a file, or a module (`pkg.module:fn`,
/// which may be a file in the server's directory). Such a request needs the token or the page's
/// CSRF token.
bool LoadsComponentCode(std::string_view name);

/// OK for a name that is no path, or a path (resolved from the working directory, symlinks
/// followed) inside one of `roots`; kPermissionDenied naming the file and the roots otherwise.
Status CheckComponentPath(std::string_view name, const std::vector<std::filesystem::path>& roots);

}  // namespace torchx::ui
