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
    submitted to, the default first. Composite back-ends (``pipeline``: a handle scheme for
    pipelines of apps, not a scheduler of one AppDef) are left out, as TorchX has none."""
    return {name: _factory(name) for name in core().scheduler_names() if not _is_composite(name)}


_COMPOSITE: Dict[str, bool] = {}


def _is_composite(name: str) -> bool:
    # Asking a back-end for its capabilities makes it (loading a module); `composite` is fixed per
    # back-end, so each name is asked once per process.
    if name not in _COMPOSITE:
        _COMPOSITE[name] = "composite" in core().scheduler_capabilities(name)
    return _COMPOSITE[name]


def get_default_scheduler_name() -> str:
    """The scheduler ``torchx run`` uses without ``-s`` (TorchX's: local_cwd)."""
    return core().scheduler_names()[0]


def _factory(name: str) -> Callable[..., SchedulerInfo]:
    def create(session_name: str = "torchx", **kwargs: object) -> SchedulerInfo:
        return SchedulerInfo(name, session_name)

    create._torchx_core_backend = name  # type: ignore[attr-defined]  # the Runner lets the core drive it
    return create
