"""``torchx configure [-s a,b] [--print] [--all]``: writes (or prints) a .torchxconfig with the
schedulers' run options."""

import argparse
import sys

from torchx.cli.cmd_base import SubCommand
from torchx.runner.config import dump
from torchx.schedulers import get_scheduler_factories


class CmdConfigure(SubCommand):
    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("-s", "--schedulers", type=str, help="comma-separated schedulers (default: all)")
        subparser.add_argument("--print", action="store_true", help="print to stdout instead of writing .torchxconfig")
        subparser.add_argument("-a", "--all", action="store_true", help="every option, not only the required ones")

    def run(self, args: argparse.Namespace) -> None:
        schedulers = args.schedulers.split(",") if args.schedulers else list(get_scheduler_factories())
        required_only = not args.all
        if args.print:
            dump(f=sys.stdout, schedulers=schedulers, required_only=required_only)
        else:
            with open(".torchxconfig", "w") as f:
                dump(f=f, schedulers=schedulers, required_only=required_only)
