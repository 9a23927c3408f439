"""Printing many replicas' log lines at once, each line prefixed with its ``role/replica``."""

import threading
from queue import Queue
from typing import Any, List, Optional, TextIO, Tuple

from torchx.specs.api import AppDef
from torchx.util.colors import ENDC, GREEN


def _find_role_replicas(app: AppDef, role_name: Optional[str]) -> List[Tuple[str, int]]:
    """(role, replica index) of every replica of ``role_name`` (of every role when None)."""
    return [
        (role.name, i)
        for role in app.roles
        if role_name is None or role.name == role_name
        for i in range(role.num_replicas)
    ]


def _prefix_line(prefix: str, line: str) -> str:
    """``line`` with ``prefix`` at its start and after each inner line break (``\\n`` or a
    carriage return that redraws the line), its final newline kept."""
    end = "\n" if line.endswith("\n") else ""
    body = line[: len(line) - len(end)]
    body = body.replace("\r\n", "\n").replace("\n", "\n" + prefix).replace("\r", "\r" + prefix)
    return prefix + body + end


def _print_log_lines(
    dst: TextIO,
    runner: Any,
    app_handle: str,
    role_name: str,
    replica_id: int,
    regex: Optional[str],
    should_tail: bool,
    exceptions: "Queue[Exception]",
    streams: Any = None,
) -> None:
    """Prints one replica's lines, each prefixed ``role/replica``; an error goes to
    ``exceptions`` for the thread that waits."""
    prefix = f"{GREEN}{role_name}/{replica_id}{ENDC} "
    try:
        for line in runner.log_lines(app_handle, role_name, replica_id, regex, should_tail=should_tail, streams=streams):
            print(_prefix_line(prefix, line), file=dst, end="", flush=True)
    except BrokenPipeError:
        return  # the reader went away (`| head`): nothing more to say
    except Exception as e:  # noqa: BLE001 - handed to the thread that waits for us
        exceptions.put(e)


def print_replicas(
    dst: TextIO,
    runner: Any,
    app_handle: str,
    replicas: List[Tuple[str, int]],
    regex: Optional[str],
    should_tail: bool,
    streams: Any = None,
) -> None:
    """The lines of every (role, replica) in ``replicas``, read in parallel (one thread each);
    returns when all are done and re-raises the first error a reader hit."""
    exceptions: "Queue[Exception]" = Queue()
    threads = [
        threading.Thread(
            target=_print_log_lines,
            args=(dst, runner, app_handle, role, k, regex, should_tail, exceptions, streams),
            daemon=True,
        )
        for role, k in replicas
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if not exceptions.empty():
        raise exceptions.get()


def tee_logs(
    dst: TextIO,
    app_handle: str,
    regex: Optional[str],
    runner: Any,
    should_tail: bool = False,
    streams: Any = None,
    colorize: bool = False,
) -> threading.Thread:
    """A (not yet started) thread that prints every replica's lines to ``dst`` and re-raises the
    first error a replica's reader hit. ``colorize`` is accepted for TorchX's signature: colours
    follow whether stdout is a terminal (torchx.util.colors)."""

    def run() -> None:
        app = runner.describe(app_handle)
        if app is not None:
            print_replicas(dst, runner, app_handle, _find_role_replicas(app, None), regex, should_tail, streams)

    return threading.Thread(target=run, daemon=True)
