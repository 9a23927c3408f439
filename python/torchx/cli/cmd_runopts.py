"""``torchx runopts [SCHEDULER]``: the run options of one scheduler, or of all."""

import argparse

from torchx.cli.cmd_base import SubCommand
from torchx.runner import get_runner


class CmdRunopts(SubCommand):
    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("scheduler", type=str, nargs="?", help="the scheduler (default: all)")

    def run(self, args: argparse.Namespace) -> None:
        with get_runner() as runner:
            names = [args.scheduler] if args.scheduler else runner.scheduler_backends()
            for name in names:
                opts = runner.scheduler_run_opts(name)
                if args.scheduler:
                    print(opts)
                else:
                    print(f"{name}:\n{opts}\n")
