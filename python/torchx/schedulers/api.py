"""Scheduler-facing types with TorchX's names (torchx.schedulers.api)."""

import json
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, List, Mapping, Optional

from torchx._core import core
from torchx.specs.api import NONE, AppDef, AppState, RoleStatus, is_terminal, runopts


class Stream(str, Enum):
    """Which output of a replica ``log_lines`` reads."""

    STDOUT = "stdout"
    STDERR = "stderr"
    COMBINED = "combined"


@dataclass
class DescribeAppResponse:
    app_id: str = "<NOT_SET>"
    state: AppState = AppState.UNSUBMITTED
    num_restarts: int = -1
    msg: str = NONE
    structured_error_msg: str = NONE
    ui_url: Optional[str] = None
    roles_statuses: List[RoleStatus] = field(default_factory=list)
    roles: List[object] = field(default_factory=list)


@dataclass
class ListAppResponse:
    app_id: str
    state: AppState
    app_handle: str = "<NOT_SET>"
    name: str = ""


class SchedulerInfo:
    """A registered back-end: its name and its run options (``run_opts()``)."""

    def __init__(self, backend: str, session_name: str = "torchx") -> None:
        self.backend = backend
        self.session_name = session_name

    def run_opts(self) -> runopts:
        return runopts._from_json(core().scheduler_runopts(self.backend))

    def __repr__(self) -> str:
        return f"SchedulerInfo(backend={self.backend!r}, session_name={self.session_name!r})"


class Scheduler:
    """Base class of schedulers written in Python (TorchX's torchx.schedulers.api.Scheduler), for
    plugins: subclasses implement ``_run_opts``, ``_submit_dryrun``, ``schedule``, ``describe``,
    ``_cancel_existing`` and, where the back-end can, ``list`` and ``log_iter``. Register a factory
    ``(session_name, **kwargs) -> Scheduler`` with ``@torchx.plugins.register.scheduler()``.

    The Runner drives a plugin through the core's scheduler template (src/schedulers/scheduler.cc:
    resolve the cfg and validate, then ``_submit_dryrun``; describe, then ``_cancel_existing`` for
    a live app), calling only the hooks (torchx/plugins/_scheduler_adapter.py). The public
    ``submit_dryrun`` and ``cancel`` below are that template for callers that use a scheduler
    object directly, as TorchX's API allows."""

    def __init__(self, backend: str, session_name: str) -> None:
        self.backend = backend
        self.session_name = session_name

    def run_opts(self) -> runopts:
        return self._run_opts()

    def _run_opts(self) -> runopts:
        return runopts()

    def submit_dryrun(self, app: AppDef, cfg: Any) -> Any:
        """Resolves ``cfg`` against the run options, then builds the request."""
        return _dryrun_resolved(self, app, self.run_opts().resolve(cfg))

    def _submit_dryrun(self, app: AppDef, cfg: Any) -> Any:
        raise NotImplementedError

    def schedule(self, dryrun_info: Any) -> str:
        raise NotImplementedError

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        raise NotImplementedError

    def exists(self, app_id: str) -> bool:
        return self.describe(app_id) is not None

    def cancel(self, app_id: str) -> None:
        """Cancels a live app; nothing for unknown or finished ones."""
        desc = self.describe(app_id)
        if desc is not None and not is_terminal(desc.state):
            self._cancel_existing(app_id)

    def _cancel_existing(self, app_id: str) -> None:
        raise NotImplementedError

    def list(self) -> List[ListAppResponse]:
        raise NotImplementedError(f"{self.backend}: list is not supported")

    def log_iter(self, app_id: str, role_name: str, k: int = 0, regex: Optional[str] = None, since: Any = None,
                 until: Any = None, should_tail: bool = False, streams: Optional[Stream] = None) -> Any:
        raise NotImplementedError(f"{self.backend}: logs are not supported")

    def close(self) -> None:
        pass


def _dryrun_resolved(scheduler: Any, app: AppDef, resolved_cfg: Mapping[str, Any]) -> Any:
    """``_submit_dryrun`` with a cfg already resolved (by ``submit_dryrun`` or by the core), plus
    the fields TorchX's ``schedule`` implementations read back from the info."""
    info = scheduler._submit_dryrun(app, resolved_cfg)
    info._app = app
    info._cfg = resolved_cfg
    info._scheduler = scheduler.backend
    return info
