"""Workspaces that are copied, not built: the job runs from a directory that holds the
workspace's files (TorchX's torchx.workspace.dir_workspace). ``.torchxignore`` leaves files out.
Mixed into Python schedulers whose jobs read a shared filesystem; the built-in slurm back-end
does the same copy in the core (its ``job_dir`` option)."""

import os
import posixpath
import shutil
import tempfile
from typing import Any, Mapping

from torchx.specs.api import CfgVal, Role
from torchx.workspace.api import walk_workspace, WorkspaceMixin


class TmpDirWorkspaceMixin(WorkspaceMixin[None]):
    """Copies the workspace into a new temporary directory and runs the role from there."""

    def build_workspace_and_update_role(self, role: Role, workspace: str, cfg: Mapping[str, CfgVal]) -> None:
        _require_workspace_dir(workspace)
        job_dir = tempfile.mkdtemp(prefix="torchx_workspace")
        _copy_into_new_dir(workspace, job_dir)
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
        _copy_into_new_dir(workspace, job_dir)
        role.image = job_dir


def _require_workspace_dir(workspace: str) -> None:
    """Fails before anything is created when ``workspace`` is not a directory."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(workspace)
    if not fs.isdir(root):
        raise FileNotFoundError(f"workspace: `{workspace}` is not a directory")


def _copy_into_new_dir(workspace: str, job_dir: str) -> None:
    """``_copy_to_dir`` into the directory this build just created, removed again when the copy
    fails (a retry must not find a half-filled job_dir)."""
    try:
        _copy_to_dir(workspace, job_dir)
    except BaseException:
        shutil.rmtree(job_dir, ignore_errors=True)
        raise


def _copy_to_dir(workspace: str, target: str) -> None:
    """Copies every file of the fsspec path ``workspace`` that ``.torchxignore`` keeps to the
    fsspec path ``target``, keeping the tree's layout; symlinks stay symlinks (local targets).
    A target inside the workspace is not copied into itself."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(workspace)
    target_fs, target_root = fsspec.core.url_to_fs(target)
    own_target = posixpath.normpath(target_root) if type(target_fs) is type(fs) else None
    for directory, dirs, files in walk_workspace(fs, root):
        dirs[:] = [d for d in dirs if posixpath.normpath(posixpath.join(directory, d)) != own_target]
        rel_dir = posixpath.relpath(directory, root)
        for name, info in files.items():
            rel = name if rel_dir == "." else posixpath.join(rel_dir, name)
            if info.get("islink"):
                _copy_symlink(info, target_fs, posixpath.join(target_root, rel))
                continue
            with fs.open(info["name"], "rb") as src, fsspec.open(posixpath.join(target, rel), "wb") as dst:
                shutil.copyfileobj(src, dst)


def _copy_symlink(info: Mapping[str, Any], target_fs: Any, dst: str) -> None:
    """Recreates the listed symlink ``info`` (fsspec lists a link with its ``destination``) at the
    local path ``dst``; other filesystems have no symlinks to make."""
    from fsspec.implementations.local import LocalFileSystem

    if not isinstance(target_fs, LocalFileSystem):
        raise ValueError(f"workspace: `{info['name']}` is a symlink, which {type(target_fs).__name__} cannot hold")
    os.makedirs(posixpath.dirname(dst), exist_ok=True)
    os.symlink(str(info["destination"]), dst)
