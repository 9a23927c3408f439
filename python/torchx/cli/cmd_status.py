"""``torchx status APP_HANDLE [--roles a,b] [--json]``."""

import argparse
import json

from torchx.cli.cmd_base import AppHandleSubCommand, exit_missing_app
from torchx.runner import Runner


class CmdStatus(AppHandleSubCommand):
    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        super().add_arguments(subparser)
        subparser.add_argument("--roles", type=str, default="", help="comma-separated roles to show (default: all)")
        subparser.add_argument("--json", action="store_true", help="print the status as JSON")

    def run_with_runner(self, args: argparse.Namespace, runner: Runner) -> None:
        status = runner.status(args.app_handle)
        if status is None:
            exit_missing_app(args.app_handle)
            return
        roles = [r for r in args.roles.split(",") if r] or None
        if args.json:
            print(json.dumps(status.to_json(roles), indent=2))
        else:
            print(status.format(roles))
