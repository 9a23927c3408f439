"""SubCommand: one verb of ``torchx`` (TorchX's torchx.cli.cmd_base)."""

import abc
import argparse
import logging
import sys

from torchx.runner import Runner, get_runner
from torchx.specs.api import parse_app_handle

logger: logging.Logger = logging.getLogger(__name__)


class SubCommand(abc.ABC):
    """A verb: declares its arguments on its sub-parser, then runs with the parsed namespace."""

    @abc.abstractmethod
    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        ...

    @abc.abstractmethod
    def run(self, args: argparse.Namespace) -> None:
        ...


class AppHandleSubCommand(SubCommand):
    """A verb on one app handle (``scheduler://session/app_id``), run with a Runner that is
    closed afterwards."""

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("app_handle", type=str, help="the app's handle: scheduler://session/app_id")

    def run(self, args: argparse.Namespace) -> None:
        with get_runner() as runner:
            self.run_with_runner(args, runner)

    @abc.abstractmethod
    def run_with_runner(self, args: argparse.Namespace, runner: Runner) -> None:
        ...


def exit_missing_app(app_handle: str) -> None:
    """Logs that the scheduler does not know the app and exits with status 1."""
    scheduler, _, app_id = parse_app_handle(app_handle)
    logger.error("app `%s` is not known to scheduler `%s` (%s)", app_id, scheduler, app_handle)
    sys.exit(1)
