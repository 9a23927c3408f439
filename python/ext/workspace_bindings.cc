// Workspace file selection: the core's .torchxignore / .dockerignore matcher, so that
// torchx.workspace.walk_workspace (over any fsspec filesystem) keeps exactly the files the
// built-in back-ends' workspace builds keep.
#include <pybind11/stl.h>

#include "bindings.h"
#include "core/ignore_patterns.h"

namespace torchx::python {

void BindWorkspace(pybind11::module_& m) {
  m.def("workspace_path_ignored", &internal::IsIgnored, pybind11::arg("rel"), pybind11::arg("patterns"),
        "True when the '/'-separated path `rel` (relative to the workspace) is excluded by `patterns` "
        "(dockerignore rules: fnmatch, `!` re-includes, a matching directory excludes what is under it, "
        "the last matching pattern wins).");
}

}  // namespace torchx::python
