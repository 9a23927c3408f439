"""Scheduler-facing types with TorchX's names (torchx.schedulers.api)."""

import json
from dataclasses import dataclass, field
from enum import Enum
from typing import List, Optional

from torchx._core import core
from torchx.specs.api import NONE, AppDef, AppState, RoleStatus, runopts


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
