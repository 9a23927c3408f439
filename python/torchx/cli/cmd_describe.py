"""``torchx describe APP_HANDLE``: the app as submitted."""

import argparse
import dataclasses
import pprint

from torchx.cli.cmd_base import AppHandleSubCommand, exit_missing_app
from torchx.runner import Runner


class CmdDescribe(AppHandleSubCommand):
    def run_with_runner(self, args: argparse.Namespace, runner: Runner) -> None:
        app = runner.describe(args.app_handle)
        if app is None:
            exit_missing_app(args.app_handle)
            return
        pprint.pprint(dataclasses.asdict(app), indent=2, width=80)
