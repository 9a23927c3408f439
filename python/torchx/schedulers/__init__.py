"""torchx.schedulers: the scheduler back-ends the core registers, by name.

``get_scheduler_factories()`` maps each name ("local_cwd", "local", ...) to a factory of a
``SchedulerInfo`` (its name and run options); submitting goes through ``torchx.runner``.
"""

from typing import Callable, Dict

from torchx._core import core
from torchx.schedulers.api import (
    DescribeAppResponse,
    ListAppResponse,
    Scheduler,
    SchedulerFactory,
    SchedulerInfo,
    Stream,
)

__all__ = [
    "DescribeAppResponse",
    "ListAppResponse",
    "Scheduler",
    "SchedulerFactory",
    "SchedulerInfo",
    "Stream",
    "get_default_scheduler_name",
    "get_scheduler_factories",
]


def get_scheduler_factories(group: str = "torchx.schedulers", skip_defaults: bool = False) -> Dict[str, Callable[..., SchedulerInfo]]:
    """Name -> factory(session_name, **kwargs) for every registered scheduler an AppDef can be
    submitted to: plugins first, then the built-ins (TorchX's order since its #1448), or only the
    plugins with ``skip_defaults``. ``group`` names the entry point group plugins come from; for
    another group than ``torchx.schedulers`` its entry points' own factories are returned, loaded
    but not called. Nothing is constructed: a plugin that cannot be built here (NeMo-Run's
    ``skypilot`` without SkyPilot installed) is listed, and fails only when used. Composite
    back-ends (``pipeline``, ``sweep``, ``managed``: handle schemes for many apps, not schedulers of
    one AppDef) are left out, as TorchX has none."""
    entries = [(name, source) for name, source, composite in core().scheduler_entries() if not composite]
    builtins = [name for name, source in entries if source == "builtin"]
    if group != "torchx.schedulers":
        out: Dict[str, Callable[..., SchedulerInfo]] = dict(_entry_point_factories(group))
        if not skip_defaults:
            for name in builtins:
                out.setdefault(name, _factory(name))
        return out
    plugins = [name for name, source in entries if source != "builtin"]
    return {name: _factory(name) for name in (plugins if skip_defaults else plugins + builtins)}


def _entry_point_factories(group: str) -> Dict[str, Callable[..., SchedulerInfo]]:
    # Loading an entry point imports its module; calling it (building the scheduler) is left to
    # the caller, as TorchX leaves it.
    from importlib import metadata

    try:
        eps = metadata.entry_points(group=group)
    except TypeError:  # Python < 3.10
        eps = metadata.entry_points().get(group, [])  # type: ignore[attr-defined,arg-type]
    return {ep.name: ep.load() for ep in eps}


def get_default_scheduler_name() -> str:
    """The scheduler ``torchx run`` uses without ``-s``: the first plugin scheduler (TorchX #1448's
    merged order), else local_cwd."""
    return core().scheduler_names()[0]


def _factory(name: str) -> Callable[..., SchedulerInfo]:
    def create(session_name: str = "torchx", **kwargs: object) -> SchedulerInfo:
        return SchedulerInfo(name, session_name)

    create._torchx_core_backend = name  # type: ignore[attr-defined]  # the Runner lets the core drive it
    return create
