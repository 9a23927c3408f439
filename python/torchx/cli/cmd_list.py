"""``torchx list -s SCHEDULER``: the apps a scheduler knows."""

import argparse

from torchx.cli.cmd_base import SubCommand
from torchx.runner import get_runner
from torchx.schedulers import get_default_scheduler_name


class CmdList(SubCommand):
    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("-s", "--scheduler", type=str, default=get_default_scheduler_name(), help="the scheduler")

    def run(self, args: argparse.Namespace) -> None:
        with get_runner() as runner:
            apps = runner.list(args.scheduler)
        rows = [(a.app_handle, a.state.name) for a in apps]
        width = max([len("APP HANDLE")] + [len(h) for h, _ in rows])
        print(f"{'APP HANDLE':<{width}}  APP STATUS")
        for handle, state in rows:
            print(f"{handle:<{width}}  {state}")
