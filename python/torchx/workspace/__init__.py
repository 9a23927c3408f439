"""Workspaces: local project directories built into what a job runs (TorchX's torchx.workspace).
A workspace is an fsspec path (``file://.``, ``memory://project/``); ``.torchxignore`` (or
``.dockerignore`` for image builds) at its root leaves files out."""

from torchx.workspace.api import MultiWorkspaceMixin, walk_workspace, WorkspaceMixin

__all__ = ["MultiWorkspaceMixin", "WorkspaceMixin", "walk_workspace"]
