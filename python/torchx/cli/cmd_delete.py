"""``torchx delete APP_HANDLE``."""

import argparse

from torchx.cli.cmd_base import AppHandleSubCommand
from torchx.runner import Runner


class CmdDelete(AppHandleSubCommand):
    def run_with_runner(self, args: argparse.Namespace, runner: Runner) -> None:
        runner.delete(args.app_handle)
