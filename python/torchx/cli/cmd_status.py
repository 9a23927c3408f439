"""``torchx status APP_HANDLE [--roles a,b] [--json]``."""

import argparse
import json

from torchx.cli.cmd_base import AppHandleSubCommand, exit_missing_app
from torchx.runner import Runner
from torchx.specs.api import parse_app_handle


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
        if args.json:  # torchx-nightly's keys: the status, the handle's parts and ui_url
            scheduler, _, app_id = parse_app_handle(args.app_handle)
            out = {**status.to_json(roles), "handle": args.app_handle, "app_id": app_id, "scheduler": scheduler,
                   "ui_url": status.ui_url}
            print(json.dumps(out, indent=2))
        else:
            print(status.format(roles))
