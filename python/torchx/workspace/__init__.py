"""Workspaces: local project directories built into what a job runs (TorchX's torchx.workspace)."""

from torchx.workspace.api import WorkspaceMixin

__all__ = ["WorkspaceMixin"]
