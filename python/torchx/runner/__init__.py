"""torchx.runner: submit apps and components to schedulers, and follow them by handle."""

from torchx.runner.api import Runner, get_runner

__all__ = ["Runner", "get_runner"]
