"""``torchx cancel APP_HANDLE``."""

import argparse

from torchx.cli.cmd_base import AppHandleSubCommand
from torchx.runner import Runner


class CmdCancel(AppHandleSubCommand):
    def run_with_runner(self, args: argparse.Namespace, runner: Runner) -> None:
        runner.cancel(args.app_handle)
