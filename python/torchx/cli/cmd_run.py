"""``torchx run`` and ``torchx builtins``: run by the ``torchx`` binary (see cmd_core), plus
TorchX's run-argument record (``TorchXRunArgs``) that tools build runs from."""

import argparse
import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from torchx.cli.cmd_core import CoreSubCommand
from torchx.runner import config
from torchx.specs.api import CfgVal
from torchx.specs.metadata_keys import TORCHX_CONTEXT_NAME


@dataclass
class TorchXRunArgs:
    """What one ``torchx run`` does: the component and its arguments, the scheduler and its
    options, and how to follow the app."""

    component_name: str
    scheduler: str
    scheduler_args: Dict[str, Any]
    scheduler_cfg: Dict[str, CfgVal] = field(default_factory=dict)
    dryrun: bool = False
    wait: bool = False
    log: bool = False
    workspace: str = ""
    parent_run_id: Optional[str] = None
    tee_logs: bool = False
    component_args: Dict[str, Any] = field(default_factory=dict)
    component_args_str: List[str] = field(default_factory=list)


def torchx_run_args_from_json(json_data: Dict[str, Any]) -> TorchXRunArgs:
    """A TorchXRunArgs from a JSON object: ValueError naming the missing required fields, then
    the unknown ones; an empty ``workspace`` is the current directory."""
    fields = [f.name for f in dataclasses.fields(TorchXRunArgs)]
    required = [
        f.name
        for f in dataclasses.fields(TorchXRunArgs)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    missing = [name for name in required if name not in json_data]
    if missing:
        raise ValueError(f"The following required fields are missing: {', '.join(missing)}")
    unknown = [k for k in json_data if k not in fields]
    if unknown:
        raise ValueError(
            f"The following fields are not part of the run command: {', '.join(unknown)}. "
            f"The run command takes: {', '.join(fields)}"
        )
    args = TorchXRunArgs(**json_data)
    if not args.workspace:
        args.workspace = str(Path.cwd())
    return args


def torchx_run_args_from_argparse(
    args: argparse.Namespace,
    component_name: str,
    component_args: List[str],
    scheduler_cfg: Dict[str, CfgVal],
) -> TorchXRunArgs:
    """A TorchXRunArgs from ``torchx run``'s parsed options (the component's arguments stay
    strings, in ``component_args_str``)."""
    return TorchXRunArgs(
        component_name=component_name,
        scheduler=args.scheduler,
        scheduler_args={},
        scheduler_cfg=scheduler_cfg,
        dryrun=args.dryrun,
        wait=args.wait,
        log=args.log,
        workspace=args.workspace,
        parent_run_id=args.parent_run_id,
        tee_logs=args.tee_logs,
        component_args={},
        component_args_str=list(component_args),
    )


def _parse_component_name_and_args(
    component_name_and_args: List[str],
    subparser: argparse.ArgumentParser,
    dirs: Optional[List[str]] = None,
) -> Tuple[str, List[str]]:
    """(component, its arguments) from ``run``'s trailing arguments: the first one unless it is
    an option (then ``[cli:run] component`` from .torchxconfig); a leading ``--`` is dropped."""
    args = list(component_name_and_args)
    if args and args[0] == "--":
        args = args[1:]
    component = config.get_config(prefix="cli", name="run", key="component", dirs=dirs)
    if args and not args[0].startswith("-"):
        component, args = args[0], args[1:]
    if not component:
        subparser.error(
            "missing component name: give one (e.g. `torchx run utils.echo --msg hi`) or set "
            "`component` in .torchxconfig's [cli:run] section"
        )
    return str(component), args


class CmdRun(CoreSubCommand):
    """``torchx run``. ``add_arguments`` registers TorchX's options, so that a tool subclassing this
    class (or adding a verb through ``torchx.cli.cmds`` on top of it) sees TorchX's parser; ``run``
    hands the parsed options to the ``torchx`` binary, which does the work. Used as is, the CLI
    passes the arguments through untouched (``passes_argv_through``)."""

    def __init__(self) -> None:
        super().__init__("run")
        self._subparser: Optional[argparse.ArgumentParser] = None

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        from torchx.cli.argparse_util import ArgOnceAction, torchxconfig_run
        from torchx.schedulers import get_default_scheduler_name

        self._subparser = subparser
        # TorchX's defaults, marked (_Default) so that `run` hands the binary only what was given:
        # the binary resolves the same defaults itself, and takes no workspace unless one is named.
        subparser.add_argument("-s", "--scheduler", action=torchxconfig_run,
                               default=_Default(get_default_scheduler_name()),
                               help="Name of the scheduler to use (default: [cli:run] scheduler, else the first "
                                    "plugin's, else local_cwd).")
        subparser.add_argument("-cfg", "--scheduler_args", action=ArgOnceAction, default=None,
                               help="Arguments to pass to the scheduler (Ex:`cluster=foo,user=bar`). For a list of "
                                    "scheduler run options run: `torchx runopts`")
        subparser.add_argument("--dryrun", action="store_true", default=False,
                               help="Does not actually submit the app, just prints the scheduler request")
        subparser.add_argument("--wait", action="store_true", default=False, help="Wait for the app to finish.")
        subparser.add_argument("--log", action="store_true", default=False,
                               help="Stream logs while waiting for app to finish.")
        subparser.add_argument("--workspace", "--buck-target", action=torchxconfig_run, default=_Default(Path.cwd()),
                               help="local workspace to build into the app (on a scheduler with workspaces; "
                                    "named explicitly: this package builds none by default)")
        subparser.add_argument("--parent_run_id", type=str, default=None,
                               help="optional parent run ID that this run belongs to (experiment tracking)")
        subparser.add_argument("--tee_logs", action="store_true", default=False,
                               help="Add additional prefix to log lines to indicate which replica is printing the log")
        subparser.add_argument("--stdin", action="store_true", default=False,
                               help="Read JSON input from stdin to parse into torchx run args and run the component.")
        subparser.add_argument("--json", action="store_true", default=False,
                               help="Print a single JSON object to stdout instead of the human-readable output.")
        subparser.add_argument("component_name_and_args", nargs=argparse.REMAINDER)

    def verify_no_extra_args(self, args: argparse.Namespace) -> None:
        """With ``--stdin`` the JSON is the whole request: any other option given (one whose value
        differs from its default; ``--dryrun`` and ``--json`` aside) is a usage error."""
        if not getattr(args, "stdin", False) or self._subparser is None:
            return
        given = []
        for action in self._subparser._actions:
            if action.dest in ("stdin", "help", "dryrun", "json"):
                continue
            value = getattr(args, action.dest, action.default)
            if action.dest == "component_name_and_args" and value == []:
                continue
            if value != action.default:
                given.append(action.option_strings[-1] if action.option_strings else action.dest)
        if given:
            self._subparser.error(
                f"Cannot specify {', '.join(given)} when using --stdin: the JSON on stdin is the whole request "
                "(only --dryrun and --json may go with it)"
            )

    def torchx_json_from_stdin(self, args: Optional[argparse.Namespace] = None) -> Dict[str, Any]:
        """The run request read from stdin: a JSON object (exit 1 naming the problem otherwise),
        with ``dryrun`` set when ``--dryrun`` was given."""
        import json
        import sys

        try:
            data = json.load(sys.stdin)
        except (json.JSONDecodeError, EOFError) as e:
            print(f"torchx: error: --stdin: the input is not JSON ({e})", file=sys.stderr)
            sys.exit(1)
        if not isinstance(data, dict):
            print(f"torchx: error: --stdin: expected a JSON object, got {type(data).__name__}", file=sys.stderr)
            sys.exit(1)
        if args is not None and getattr(args, "dryrun", False):
            data["dryrun"] = True
        return data

    def run(self, args: argparse.Namespace) -> None:
        os.environ.setdefault(TORCHX_CONTEXT_NAME, "cli_run")  # TorchX's: what trackers read
        if getattr(args, "stdin", False):
            self.verify_no_extra_args(args)
            run_args = torchx_run_args_from_json(self.torchx_json_from_stdin(args))
            self.run_argv(_argv_of(run_args, json_output=bool(getattr(args, "json", False))))
            return
        if not hasattr(args, "component_name_and_args"):  # the pass-through parser: argv as given
            super().run(args)
            return
        argv: List[str] = []
        for flag, value in (("--scheduler", args.scheduler), ("--scheduler_args", args.scheduler_args),
                            ("--workspace", args.workspace), ("--parent_run_id", args.parent_run_id)):
            if value and not isinstance(value, _Default):
                argv += [flag, str(value)]
        argv += [f"--{name}" for name in ("dryrun", "wait", "log", "tee_logs", "json") if getattr(args, name, False)]
        self.run_argv(argv + list(args.component_name_and_args))

    def passes_argv_through(self, argv: Optional[List[str]] = None) -> bool:
        own = type(self).add_arguments is CmdRun.add_arguments and type(self).run is CmdRun.run
        return own and not _wants_stdin(argv or [])


def _wants_stdin(argv: List[str]) -> bool:
    """``--stdin`` among run's options (before the component): Python reads the request."""
    for arg in argv:
        if arg == "--stdin":
            return True
        if not arg.startswith("-"):
            return False
    return False


def _argv_of(run_args: TorchXRunArgs, json_output: bool) -> List[str]:
    """The ``torchx run`` arguments of a TorchXRunArgs (``--stdin``): scheduler_args as ``-cfg``
    text, dict component arguments as ``--name value`` (lists comma-joined)."""
    argv = ["--scheduler", run_args.scheduler]
    cfg = {**run_args.scheduler_args, **run_args.scheduler_cfg}
    if cfg:
        argv += ["--scheduler_args", ",".join(f"{k}={_cfg_value(v)}" for k, v in cfg.items())]
    if run_args.workspace and run_args.workspace != str(Path.cwd()):
        argv += ["--workspace", run_args.workspace]
    if run_args.parent_run_id:
        argv += ["--parent_run_id", run_args.parent_run_id]
    flags = {"dryrun": run_args.dryrun, "wait": run_args.wait, "log": run_args.log, "tee_logs": run_args.tee_logs,
             "json": json_output}
    argv += [f"--{name}" for name, on in flags.items() if on]
    argv.append(run_args.component_name)
    if run_args.component_args_str:
        argv += list(run_args.component_args_str)
    for name, value in run_args.component_args.items():
        argv += [f"--{name}", _cli_value(value)]
    return argv


def _cfg_value(value: Any) -> str:
    """A run option's value in ``-cfg`` text: list items joined by ``;``, dict items ``k:v``."""
    if isinstance(value, (list, tuple)):
        return ";".join(str(v) for v in value)
    if isinstance(value, dict):
        return ";".join(f"{k}:{v}" for k, v in value.items())
    return str(value)


def _cli_value(value: Any) -> str:
    """A component argument's value on the command line: lists comma-joined, dicts ``k=v``."""
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return str(value)


class _Default(str):
    """An option's default as ``run``'s parser holds it: equal to the value, and known as a default
    (not given) when the arguments are handed to the binary."""


class CmdBuiltins(CoreSubCommand):
    """``torchx builtins [--print NAME]``: the builtin components, or one's definition."""

    def __init__(self) -> None:
        super().__init__("builtins")

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("--print", type=str, help="print the definition of this builtin component")

    def _builtins(self) -> Dict[str, Any]:
        """Every named component without linter errors (TorchX's ``CmdBuiltins._builtins``)."""
        from torchx.specs.finder import get_components

        return get_components()

    def run(self, args: argparse.Namespace) -> None:
        self.run_argv(["--print", args.print] if getattr(args, "print", None) else [])
