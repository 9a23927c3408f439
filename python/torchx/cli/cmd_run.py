"""``torchx run`` and ``torchx builtins``: run by the ``torchx`` binary (see cmd_core), plus
TorchX's run-argument record (``TorchXRunArgs``) that tools build runs from."""

import argparse
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from torchx.cli.cmd_core import CoreSubCommand
from torchx.runner import config
from torchx.specs.api import CfgVal


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
    def __init__(self) -> None:
        super().__init__("run")


class CmdBuiltins(CoreSubCommand):
    """``torchx builtins [--print NAME]``: the builtin components, or one's definition."""

    def __init__(self) -> None:
        super().__init__("builtins")

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        subparser.add_argument("--print", type=str, help="print the definition of this builtin component")

    def run(self, args: argparse.Namespace) -> None:
        self.run_argv(["--print", args.print] if getattr(args, "print", None) else [])
