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
    c = core()
    return {name: _factory(name) for name in c.scheduler_names() if "composite" not in c.scheduler_capabilities(name)}


def get_default_scheduler_name() -> str:
    """The scheduler ``torchx run`` uses without ``-s`` (TorchX's: local_cwd)."""
    return core().scheduler_names()[0]


def _factory(name: str) -> Callable[..., SchedulerInfo]:
    def create(session_name: str = "torchx", **kwargs: object) -> SchedulerInfo:
        return SchedulerInfo(name, session_name)

    create._torchx_core_backend = name  # type: ignore[attr-defined]  # the Runner lets the core drive it
    return create
