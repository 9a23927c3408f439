"""torchx.sweeps: many variants of one job run as one unit (docs/sweeps.md).

``run`` takes a sweep file or the same as a dict: one component (or an AppDef), a search space
(``grid`` or a seeded ``random`` search) and how many trials may run at once. Every trial is built
and dry-run before anything is submitted; then a detached driver submits the trials and keeps what
each reports. It returns a handle ``sweep://<session>/<id>`` that ``torchx.runner.Runner``'s
status / wait / log_lines / cancel / list / describe take like any app's; ``status`` gives the
trials with their values and metrics, best first::

    from torchx import sweeps

    handle = sweeps.run({
        "component": "utils.python",
        "args": ["--script", "train.py", "--", "--lr", "@{lr}"],
        "max_parallel": 3,
        "objective": "loss",
        "space": {"parameters": {"lr": [0.1, 0.01, 0.001]}},
    })
    print(sweeps.status(handle)["best"])

The trials are the same as the CLI's for the same file: the space is expanded, and a random
search drawn, by the same core code.
"""

import json
import os
from typing import Any, Dict, Mapping, Optional, Union

from torchx.runner import Runner, get_runner

__all__ = ["run", "dryrun", "status"]

SweepSource = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def _text_of(sweep: SweepSource) -> "tuple[str, str]":
    if isinstance(sweep, Mapping):
        return json.dumps(dict(sweep), ensure_ascii=False), "sweep"
    path = os.fspath(sweep)
    with open(path, encoding="utf-8") as f:
        return f.read(), path


Managed = Union[bool, Dict[str, Any], None]


def _managed_block(managed: Managed) -> Optional[Dict[str, Any]]:
    # True: every default; a dict: the keys of a sweep file's `managed:` block.
    if managed is None or managed is False:
        return None
    if managed is True:
        return {}
    if not isinstance(managed, dict):
        raise TypeError(f"managed: give True or a dict of max_recoveries, recover_on, failover, start_timeout, "
                        f"checkpoint_dir (got {type(managed).__name__})")
    return dict(managed)


def _call(sweep: SweepSource, scheduler: Optional[str], cfg: Optional[Dict[str, Any]], name: Optional[str],
          max_parallel: Optional[int], runner: Optional[Runner], dryrun: bool, managed: Managed) -> str:
    text, origin = _text_of(sweep)
    core = (runner or get_runner())._core
    overrides: Dict[str, Any] = {}
    if cfg:
        overrides["cfg"] = dict(cfg)
    if name:
        overrides["name"] = name
    if max_parallel is not None:
        overrides["max_parallel"] = max_parallel
    block = _managed_block(managed)
    if block is not None:
        overrides["managed"] = block
    return core.launch_composite("sweep", text, origin, scheduler or "", json.dumps(overrides, ensure_ascii=False),
                                 dryrun)


def run(sweep: SweepSource, scheduler: Optional[str] = None, cfg: Optional[Dict[str, Any]] = None,
        name: Optional[str] = None, max_parallel: Optional[int] = None, runner: Optional[Runner] = None,
        managed: Managed = None) -> str:
    """Validates and starts a sweep; returns its handle. ``scheduler``/``cfg``: the trials'
    scheduler and options (over the file's); ``max_parallel`` over the file's. ``managed``: every
    trial a managed job (``sweep run --managed``): True, or a dict with the keys of a sweep file's
    ``managed:`` block (over the file's). Raises ``ValueError`` naming the field (and the trial)
    for a bad sweep; nothing is submitted then."""
    return _call(sweep, scheduler, cfg, name, max_parallel, runner, False, managed)


def dryrun(sweep: SweepSource, scheduler: Optional[str] = None, cfg: Optional[Dict[str, Any]] = None,
           name: Optional[str] = None, max_parallel: Optional[int] = None, runner: Optional[Runner] = None,
           managed: Managed = None) -> str:
    """Every trial's values and the first trial's request (each trial validated); submits nothing."""
    return _call(sweep, scheduler, cfg, name, max_parallel, runner, True, managed)


def status(handle: str, runner: Optional[Runner] = None) -> Dict[str, Any]:
    """The sweep's trials as ``torchx sweep status --json`` gives them: ``state``, ``objective``,
    ``best`` (the best trial's index) and ``trials`` (index, values, state, handle, times, metrics,
    objective), best first."""
    core = (runner or get_runner())._core
    return json.loads(core.sweep_status(handle))
