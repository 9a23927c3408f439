"""Scheduler-facing types with TorchX's names (torchx.schedulers.api)."""

import abc
import re
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, Dict, Generic, Iterable, Iterator, List, Mapping, Optional, TypeVar, Union

from torchx._core import core
if TYPE_CHECKING:  # type checkers know dataclasses, and records behave as they do
    from dataclasses import dataclass as record, field
else:
    from torchx._record import field, record
from torchx.specs.api import (
    NONE,
    NULL_RESOURCE,
    AppDef,
    AppDryRunInfo,
    AppState,
    CfgVal,
    RoleStatus,
    Workspace,
    runopts,
)


if TYPE_CHECKING:
    from datetime import datetime



def __getattr__(name: str) -> Any:
    # StructuredOpts loads on first use: importing torchx.runner should not pay for it.
    if name == "StructuredOpts":
        from torchx.schedulers.structured_opts import StructuredOpts

        return StructuredOpts
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Stream(str, Enum):
    """Which output of a replica ``log_lines`` reads."""

    STDOUT = "stdout"
    STDERR = "stderr"
    COMBINED = "combined"


@record
class DescribeAppResponse:
    app_id: str = "<NOT_SET>"
    state: AppState = AppState.UNSUBMITTED
    num_restarts: int = -1
    msg: str = NONE
    structured_error_msg: str = NONE
    ui_url: Optional[str] = None
    metadata: Dict[str, str] = field(default_factory=dict)
    roles_statuses: List[RoleStatus] = field(default_factory=list)
    roles: List[object] = field(default_factory=list)


@record
class ListAppResponse:
    app_id: str
    state: AppState
    app_handle: str = "<NOT_SET>"
    name: str = ""

    def __hash__(self) -> int:  # TorchX's: lets tests look responses up in sets
        return hash((self.app_id, self.app_handle, self.state))


class SchedulerInfo:
    """A registered back-end: its name and its run options (``run_opts()``)."""

    def __init__(self, backend: str, session_name: str = "torchx") -> None:
        self.backend = backend
        self.session_name = session_name

    def run_opts(self) -> runopts:
        return runopts._from_json(core().scheduler_runopts(self.backend))

    def __repr__(self) -> str:
        return f"SchedulerInfo(backend={self.backend!r}, session_name={self.session_name!r})"


T = TypeVar("T")


class Scheduler(abc.ABC, Generic[T]):
    """Base class of schedulers written in Python (TorchX's torchx.schedulers.api.Scheduler), for
    plugins and for subclasses of TorchX's scheduler classes. ``T`` is the type of the run config
    (a Mapping, or a StructuredOpts). Subclasses implement ``_submit_dryrun``, ``schedule``,
    ``describe``, ``list`` and ``_cancel_existing`` and, where they can, ``_run_opts`` and
    ``log_iter``. Register a factory ``(session_name, **kwargs) -> Scheduler`` with
    ``@torchx.plugins.register.scheduler()``.

    The public methods are TorchX's template: ``submit`` = ``submit_dryrun`` + ``schedule``;
    ``submit_dryrun`` resolves the cfg, calls ``_submit_dryrun``, then every role's ``pre_proc``;
    ``cancel`` and ``delete`` act only on an app that ``exists``. Through the Runner, the core runs
    the same template and calls the hooks (torchx/plugins/_scheduler_adapter.py)."""

    def __init__(self, backend: str, session_name: str) -> None:
        self.backend = backend
        self.session_name = session_name

    def close(self) -> None:
        """Releases local resources; most schedulers hold none."""

    def submit(self, app: AppDef, cfg: T, workspace: Union[str, Workspace, None] = None) -> str:
        """Builds the workspace (schedulers that support one), dry-runs and schedules ``app``;
        returns the app id."""
        resolved = self.run_opts().resolve(cfg)  # type: ignore[arg-type]
        if workspace:
            from torchx.workspace.api import WorkspaceMixin

            if not isinstance(self, WorkspaceMixin):
                raise ValueError(f"scheduler `{self.backend}` does not support workspaces")
            app.roles[0].workspace = Workspace.from_str(workspace) if isinstance(workspace, str) else workspace
            self.build_workspaces(app.roles, resolved)
        return self.schedule(self.submit_dryrun(app, resolved))  # type: ignore[arg-type]

    @abc.abstractmethod
    def schedule(self, dryrun_info: AppDryRunInfo) -> str:
        """Submits the request a dry run made; returns the app id."""

    def submit_dryrun(self, app: AppDef, cfg: T) -> AppDryRunInfo:
        """The request that ``schedule`` would submit: ``_submit_dryrun`` on the resolved cfg,
        then each role's ``pre_proc`` in role order."""
        return _dryrun_resolved(self, app, self.run_opts().resolve(cfg))  # type: ignore[arg-type]

    @abc.abstractmethod
    def _submit_dryrun(self, app: AppDef, cfg: T) -> AppDryRunInfo:
        """The back-end's request for ``app`` (``cfg`` already resolved)."""

    def run_opts(self) -> runopts:
        """The run options: ``_run_opts`` plus the workspace options of a WorkspaceMixin."""
        opts = self._run_opts()
        from torchx.workspace.api import WorkspaceMixin

        if isinstance(self, WorkspaceMixin):
            opts.update(self.workspace_opts())
        return opts

    def _run_opts(self) -> runopts:
        return runopts()

    @abc.abstractmethod
    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        """The app's state and roles, or None when the back-end does not know it."""

    @abc.abstractmethod
    def list(self, cfg: Optional[Mapping[str, CfgVal]] = None) -> List[ListAppResponse]:
        """The apps the back-end knows."""

    def describe_native(self, app_id: str) -> Optional[AppDryRunInfo]:
        """The request as the scheduler now holds it for a submitted app (the read-side twin of
        ``submit_dryrun``; torchx-nightly's). None where the scheduler cannot read it back (this
        default) or the app does not exist."""
        return None

    def exists(self, app_id: str) -> bool:
        return self.describe(app_id) is not None

    @abc.abstractmethod
    def _cancel_existing(self, app_id: str) -> None:
        """Cancels an app that exists (does not wait)."""

    def cancel(self, app_id: str) -> None:
        """Cancels the app if it exists; nothing otherwise. Does not wait."""
        if self.exists(app_id):
            self._cancel_existing(app_id)

    def delete(self, app_id: str) -> None:
        """Removes the app's definition where the back-end keeps one (cancelling a live app
        first); where it keeps none, the same as cancel."""
        if self.exists(app_id):
            self._delete_existing(app_id)

    def _delete_existing(self, app_id: str) -> None:
        self._cancel_existing(app_id)

    def log_iter(
        self,
        app_id: str,
        role_name: str,
        k: int = 0,
        regex: Optional[str] = None,
        since: "Optional[datetime]" = None,
        until: "Optional[datetime]" = None,
        should_tail: bool = False,
        streams: Optional[Stream] = None,
    ) -> Iterable[str]:
        """Lines (with their newlines) of replica ``k`` of ``role_name``; NotImplementedError for
        back-ends without logs."""
        raise NotImplementedError(f"{type(self).__qualname__} does not support application log iteration")

    def _pre_build_validate(self, app: AppDef, scheduler: str, cfg: T) -> None:
        """Checks before a workspace is built; nothing by default."""

    def _validate(self, app: AppDef, scheduler: str, cfg: Optional[T] = None) -> None:
        """ValueError for a role without a resource."""
        for role in app.roles:
            if role.resource == NULL_RESOURCE:
                raise ValueError(
                    f"No resource for role: {role.name} (image: {role.image}). Did you forget to attach resource to the role"
                )


SchedulerFactory = Callable[..., Scheduler]


def filter_regex(regex: str, data: Iterable[str]) -> Iterable[str]:
    """The items of ``data`` that ``regex`` matches anywhere (re.search)."""
    pattern = re.compile(regex)
    return filter(pattern.search, data)


def split_lines(text: str) -> List[str]:
    """``text`` cut after each ``\\n`` (kept); a last piece without one is kept as is. (Not
    str.splitlines, which also cuts at ``\\r``, form feeds and other separators.)"""
    lines = []
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        if end < 0:
            lines.append(text[start:])
            break
        lines.append(text[start:end + 1])
        start = end + 1
    return lines


def split_lines_iterator(chunks: Iterable[str]) -> Iterator[str]:
    """``split_lines`` of each chunk, in order (lines are not joined across chunks)."""
    for chunk in chunks:
        yield from split_lines(chunk)


def _dryrun_resolved(scheduler: Any, app: AppDef, resolved_cfg: Mapping[str, Any]) -> Any:
    """``_submit_dryrun`` with a cfg already resolved (by ``submit_dryrun`` or by the core), plus
    the fields TorchX's ``schedule`` implementations read back from the info."""
    info = scheduler._submit_dryrun(app, resolved_cfg)
    for role in app.roles:
        info = role.pre_proc(scheduler.backend, info)
    info._app = app
    info._cfg = resolved_cfg
    info._scheduler = scheduler.backend
    return info
