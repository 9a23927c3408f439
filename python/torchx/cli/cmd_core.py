"""Verbs the C++ ``torchx`` binary implements whole (run, builtins, plugins): handed to it with
the same arguments, so that ``python -m torchx.cli.main run ...`` prints, waits and exits exactly
as ``torchx run ...`` does."""

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
from typing import List, Optional

from torchx.cli.cmd_base import SubCommand


def core_binary() -> str:
    """The ``torchx`` executable installed with this package (its scripts directory), else the
    first on PATH."""
    beside = os.path.join(sysconfig.get_path("scripts"), "torchx")
    if os.access(beside, os.X_OK):
        return beside
    found = shutil.which("torchx")
    if not found:
        raise FileNotFoundError(
            "the `torchx` executable is not installed with this package nor on PATH (reinstall the package)"
        )
    return found


class CoreSubCommand(SubCommand):
    """A verb run by the ``torchx`` binary: every argument after the verb is passed on as given."""

    def __init__(self, verb: str) -> None:
        self.verb = verb

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("argv", nargs=argparse.REMAINDER, help=f"the arguments of `torchx {self.verb}`")

    def run(self, args: argparse.Namespace) -> None:
        self.run_argv(list(getattr(args, "argv", []) or []))

    def passes_argv_through(self, argv: Optional[List[str]] = None) -> bool:
        """Whether the CLI hands this verb's arguments (``argv``, after the verb) to the binary
        untouched: no parser of its own that a tool extended, no option only Python has."""
        return True

    def run_argv(self, argv: List[str]) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        rc = subprocess.call([core_binary(), self.verb, *argv])
        if rc != 0:
            sys.exit(rc)


class CmdPlugins(CoreSubCommand):
    def __init__(self) -> None:
        super().__init__("plugins")
