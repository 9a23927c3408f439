"""``torchx log scheduler://session/app_id[/role[/replica,...]]``: prints replicas' log lines,
each prefixed with ``role/replica``."""

import argparse
import logging
import re
import sys
import time
from typing import List, Optional, TextIO, Tuple

from torchx.cli.cmd_base import SubCommand
from torchx.runner import Runner, get_runner
from torchx.schedulers.api import Stream
from torchx.specs.api import AppDef, is_started, make_app_handle
from torchx.util.colors import ENDC, GREEN
from torchx.util.log_tee_helpers import _find_role_replicas, _prefix_line, _print_log_lines, print_replicas

logger: logging.Logger = logging.getLogger(__name__)

# scheduler://[session]/app_id[/role[/0,1,...]]
_IDENTIFIER = re.compile(r"^\w+://[^/]*/[^/]+(/[^/]+(/(\d+,?)+)?)?$")

__all__ = ["CmdLog", "ENDC", "GREEN", "find_role_replicas", "get_logs", "print_log_lines", "validate", "_prefix_line"]


def validate(job_identifier: str) -> None:
    """Exits with status 1 (after saying the form) unless ``job_identifier`` is well formed."""
    if not _IDENTIFIER.match(job_identifier):
        logger.error(
            "`%s` is not an app to read logs from: use scheduler://[session]/app_id[/role[/replica,...]], "
            "e.g. local_cwd://torchx/my_app-abc/trainer/0,1",
            job_identifier,
        )
        sys.exit(1)


def find_role_replicas(app: AppDef, role_name: Optional[str]) -> List[Tuple[str, int]]:
    return _find_role_replicas(app, role_name)


# One replica's lines to a file, each prefixed (TorchX's name for it here).
print_log_lines = _print_log_lines


def get_logs(
    file: TextIO,
    identifier: str,
    regex: Optional[str],
    should_tail: bool = False,
    runner: Optional[Runner] = None,
    streams: Optional[Stream] = None,
) -> None:
    """Prints the lines of the replicas ``identifier`` names (every replica of the app, of one
    role, or the listed ones), one reader thread per replica; re-raises a reader's error."""
    validate(identifier)
    scheduler, rest = identifier.split("://", 1)
    parts = rest.split("/")
    session = parts[0] or "default"
    app_id = parts[1]
    role_name = parts[2] if len(parts) > 2 else None
    replica_ids = [int(x) for x in parts[3].split(",") if x] if len(parts) > 3 else None
    if runner is None:
        runner = get_runner()
    app_handle = make_app_handle(scheduler, session, app_id)

    if role_name is not None and replica_ids:
        replicas = [(role_name, k) for k in replica_ids]
    else:
        said_waiting = False
        while True:
            status = runner.status(app_handle)
            if status is None:
                logger.warning("app `%s` not found", app_handle)
                return
            if is_started(status.state):
                break
            if not said_waiting:
                logger.info("Waiting for app state response before fetching logs...")
                said_waiting = True
            time.sleep(1)
        app = runner.describe(app_handle)
        replicas = find_role_replicas(app, role_name) if app is not None else []
        if not replicas:
            logger.error("app `%s` has no role `%s`", app_handle, role_name)
            sys.exit(1)

    print_replicas(file, runner, app_handle, replicas, regex, should_tail, streams)


class CmdLog(SubCommand):
    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("--regex", type=str, help="only the lines this regex matches")
        subparser.add_argument("-t", "--tail", action="store_true", help="follow the logs until the app ends")
        subparser.add_argument(
            "--streams", type=str, choices=[s.value for s in Stream], help="which output (default: combined)"
        )
        subparser.add_argument(
            "identifier", type=str, metavar="scheduler://[session]/app_id[/role[/replica,...]]",
            help="the app, or one role, or some of a role's replicas",
        )

    def run(self, args: argparse.Namespace) -> None:
        streams = Stream(args.streams) if args.streams else None
        get_logs(sys.stdout, args.identifier, args.regex, args.tail, streams=streams)
