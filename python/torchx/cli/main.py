"""``python -m torchx.cli.main``: the ``torchx`` command in Python (TorchX's torchx.cli.main).
Sub-commands from the ``torchx.cli.cmds`` entry-point group are added to (or replace) the
built-in verbs, as in TorchX."""

import argparse
import logging
import os
import sys
from typing import Dict, List, Optional

import torchx
from torchx.cli.cmd_base import SubCommand
from torchx.cli.cmd_cancel import CmdCancel
from torchx.cli.cmd_configure import CmdConfigure
from torchx.cli.cmd_core import CmdPlugins, CoreSubCommand
from torchx.cli.cmd_delete import CmdDelete
from torchx.cli.cmd_describe import CmdDescribe
from torchx.cli.cmd_list import CmdList
from torchx.cli.cmd_log import CmdLog
from torchx.cli.cmd_run import CmdBuiltins, CmdRun
from torchx.cli.cmd_runopts import CmdRunopts
from torchx.cli.cmd_status import CmdStatus
from torchx.cli.cmd_tracker import CmdTracker
from torchx.util.entrypoints import load_group

sub_parser_description = "Use the following commands to run operations, e.g.: torchx run ${JOB_NAME}"


def get_default_sub_cmds() -> Dict[str, SubCommand]:
    return {
        "builtins": CmdBuiltins(),
        "cancel": CmdCancel(),
        "configure": CmdConfigure(),
        "delete": CmdDelete(),
        "describe": CmdDescribe(),
        "list": CmdList(),
        "log": CmdLog(),
        "plugins": CmdPlugins(),
        "run": CmdRun(),
        "runopts": CmdRunopts(),
        "status": CmdStatus(),
        "tracker": CmdTracker(),
    }


def get_sub_cmds() -> Dict[str, SubCommand]:
    """The built-in verbs, then those of the ``torchx.cli.cmds`` entry points (which win)."""
    cmds = get_default_sub_cmds()
    for name, factory in (load_group("torchx.cli.cmds") or {}).items():
        cmd = factory()
        if not isinstance(cmd, SubCommand):
            raise TypeError(f"torchx.cli.cmds entry point `{name}` made a {type(cmd).__name__}, not a SubCommand")
        cmds[name] = cmd
    return cmds


def create_parser(subcmds: Dict[str, SubCommand]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="torchx", description="torchx: launch PyTorch jobs locally and on clusters")
    parser.add_argument(
        "--log_level", type=int, default=logging.INFO, help="Python logging level for the torchx logger"
    )
    parser.add_argument("--version", action="version", version=f"torchx-{torchx.__version__}")
    subparsers = parser.add_subparsers(title="sub-commands", description=sub_parser_description)
    for name, cmd in subcmds.items():
        passes = isinstance(cmd, CoreSubCommand) and cmd.passes_argv_through()
        sub = subparsers.add_parser(name, add_help=not passes)
        cmd.add_arguments(sub)
        sub.set_defaults(func=cmd.run, _cmd=cmd)
    return parser


def run_main(subcmds: Dict[str, SubCommand], argv: Optional[List[str]] = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = create_parser(subcmds)
    # A verb the binary runs gets its arguments untouched (argparse would reorder or reject them).
    verb_at = next((i for i, a in enumerate(argv) if not a.startswith("-")), None)
    cmd = subcmds.get(argv[verb_at]) if verb_at is not None else None
    if verb_at is not None and isinstance(cmd, CoreSubCommand) and cmd.passes_argv_through(argv[verb_at + 1:]):
        parser.parse_args(argv[:verb_at])  # the options before the verb (--version, --log_level)
        _setup_logging(logging.INFO)
        subcmds[argv[verb_at]].run_argv(argv[verb_at + 1:])  # type: ignore[attr-defined]
        return
    args = parser.parse_args(argv)
    _setup_logging(args.log_level)
    if "func" not in args:
        parser.print_help()
        sys.exit(1)
    args.func(args)


def _setup_logging(level: int) -> None:
    logging.basicConfig(level=level, format="%(levelname).1s %(asctime)s %(filename)s:%(lineno)d] %(message)s")
    logging.getLogger("torchx").setLevel(level)


def main(argv: Optional[List[str]] = None) -> None:
    """The verbs as Python classes, in this process (what tools that embed TorchX's CLI call)."""
    run_main(get_sub_cmds(), sys.argv[1:] if argv is None else argv)


# Verbs only the Python package has (the binary has no tracker verb: trackers are Python objects).
_PYTHON_ONLY_VERBS = frozenset({"tracker"})


def command_main(argv: Optional[List[str]] = None) -> None:
    """``python -m torchx.cli.main``: the ``torchx`` command itself. ``tracker`` and the verbs of
    ``torchx.cli.cmds`` entry points run in Python; everything else is the ``torchx`` binary,
    which replaces this process (the same output, help and exit codes, one implementation)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    verb = next((a for a in argv if not a.startswith("-")), None)
    plugin_cmds = load_group("torchx.cli.cmds") or {}
    python_only = verb in _PYTHON_ONLY_VERBS or (verb == "run" and "--stdin" in argv)  # the binary reads no JSON
    if verb is not None and (verb in plugin_cmds or python_only):
        run_main(get_sub_cmds(), argv)
        return
    from torchx.cli.cmd_core import core_binary

    binary = core_binary()
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(binary, [binary, *argv])


if __name__ == "__main__":
    command_main()
