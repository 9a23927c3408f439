"""Workspaces that are copied, not built: the job runs from a directory that holds the
workspace's files (TorchX's torchx.workspace.dir_workspace). ``.torchxignore`` leaves files out.
Mixed into Python schedulers whose jobs read a shared filesystem; the built-in slurm back-end
does the same copy in the core (its ``job_dir`` option)."""

import os
import posixpath
import shutil
import tempfile
from typing import Mapping

from torchx.specs.api import CfgVal, Role
from torchx.workspace.api import walk_workspace, WorkspaceMixin


class TmpDirWorkspaceMixin(WorkspaceMixin[None]):
    """Copies the workspace into a new temporary directory and runs the role from there."""

    def build_workspace_and_update_role(self, role: Role, workspace: str, cfg: Mapping[str, CfgVal]) -> None:
        _require_workspace_dir(workspace)
        job_dir = tempfile.mkdtemp(prefix="torchx_workspace")
        try:
            _copy_to_dir(workspace, job_dir)
        except BaseException:
            shutil.rmtree(job_dir, ignore_errors=True)
            raise
        role.image = job_dir


class DirWorkspaceMixin(WorkspaceMixin[None]):
    """Copies the workspace into the run option ``job_dir`` (which must not exist yet) and runs
    the role from there; without ``job_dir`` the role is left as it is."""

    def build_workspace_and_update_role(self, role: Role, workspace: str, cfg: Mapping[str, CfgVal]) -> None:
        job_dir = cfg.get("job_dir")
        if job_dir is None:
            return
        if not isinstance(job_dir, str):
            raise TypeError(f"job_dir: expected a directory path (str), got {type(job_dir).__name__}")
        _require_workspace_dir(workspace)
        # A new directory: an earlier job's files must not leak into this one.
        os.mkdir(job_dir)
        _copy_to_dir(workspace, job_dir)
        role.image = job_dir


def _require_workspace_dir(workspace: str) -> None:
    """Fails before anything is created when ``workspace`` is not a directory."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(workspace)
    if not fs.isdir(root):
        raise FileNotFoundError(f"workspace: `{workspace}` is not a directory")


def _copy_to_dir(workspace: str, target: str) -> None:
    """Copies every file of the fsspec path ``workspace`` that ``.torchxignore`` keeps to the
    fsspec path ``target``, keeping the tree's layout."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(workspace)
    for directory, _, files in walk_workspace(fs, root):
        rel_dir = posixpath.relpath(directory, root)
        for name, info in files.items():
            rel = name if rel_dir == "." else posixpath.join(rel_dir, name)
            with fs.open(info["name"], "rb") as src, fsspec.open(posixpath.join(target, rel), "wb") as dst:
                shutil.copyfileobj(src, dst)
