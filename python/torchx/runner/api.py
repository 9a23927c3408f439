"""Runner: TorchX's Python API over the core's Runner.

Each method converts its arguments (AppDef -> JSON, cfg dict) and hands them to the core, which
validates, dry-runs, submits and answers by app handle. Handles are self-sufficient: the local
scheduler keeps its state on disk, so a Runner in another process (or after a restart) can
status, wait for, cancel or read the logs of any handle; Ax may therefore store only the handle.
"""

import contextlib
import json
import logging
import warnings
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Mapping, Optional, Type, Union

if TYPE_CHECKING:
    from torchx.schedulers.api import ListAppResponse

from torchx._core import core
from torchx.specs.api import (
    AppDef,
    AppDryRunInfo,
    AppHandle,
    AppState,
    AppStatus,
    CfgVal,
    Workspace,
    app_to_core,
    from_json,
    runopts,
    status_from_core,
)

logger: logging.Logger = logging.getLogger(__name__)


class Runner:
    """Submits apps to schedulers by name ("local_cwd", "local", ...) and follows them.

    Use ``get_runner()``; the constructor's ``scheduler_factories`` and ``scheduler_params`` are
    accepted for TorchX compatibility (schedulers come from the core's registry)."""

    def __init__(
        self,
        name: str,
        scheduler_factories: Optional[Mapping[str, Any]] = None,
        component_defaults: Optional[Dict[str, Dict[str, str]]] = None,
        scheduler_params: Optional[Dict[str, object]] = None,
    ) -> None:
        self._name = name or "torchx"
        self._scheduler_params = dict(scheduler_params or {})
        self._core = core().Runner(self._name, component_defaults)

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release: submitted apps live on without this object."""

    # ---- submit ----

    def run(
        self,
        app: AppDef,
        scheduler: str,
        cfg: Optional[Mapping[str, CfgVal]] = None,
        workspace: Optional[str] = None,
        parent_run_id: Optional[str] = None,
        *,
        dryrun: bool = False,
    ) -> Union[AppHandle, AppDryRunInfo]:
        """Dry-runs and submits ``app``; returns its handle ``{scheduler}://{session}/{app_id}``
        (with ``dryrun=True``, the dry run's info instead, nothing submitted)."""
        with log_event("run", scheduler, app_image=_first_image(app), runcfg=_cfg_text(cfg), workspace=_ws_text(workspace)):
            info = self.dryrun(app, scheduler, cfg, workspace, parent_run_id)
            return info if dryrun else self.schedule(info)

    def name(self) -> str:
        """The session name (the middle part of the handles this Runner makes)."""
        return self._name

    def dryrun(
        self,
        app: AppDef,
        scheduler: str,
        cfg: Optional[Mapping[str, CfgVal]] = None,
        workspace: Optional[str] = None,
        parent_run_id: Optional[str] = None,
    ) -> AppDryRunInfo:
        """Validates ``app`` and builds the scheduler's request without submitting it. ``workspace``
        (a local directory) is built into the app first where the scheduler supports it
        (local_docker: an image with the directory copied in)."""
        with log_event("dryrun", scheduler, app_image=_first_image(app), runcfg=_cfg_text(cfg), workspace=_ws_text(workspace)):
            with _workspace_dir(workspace, app) as ws_dir:
                info = self._core.dryrun(app_to_core(app), scheduler, dict(cfg or {}), ws_dir)
            return _dryrun_info(info)

    def run_component(
        self,
        component: str,
        component_args: Union[List[str], Dict[str, Any], None],
        scheduler: str,
        cfg: Optional[Mapping[str, CfgVal]] = None,
        workspace: Optional[str] = None,
        parent_run_id: Optional[str] = None,
    ) -> AppHandle:
        """Builds the component (CLI-style argument list, or a dict of typed values) and runs it."""
        with log_event("run_component", scheduler, runcfg=_cfg_text(cfg), workspace=_ws_text(workspace)):
            return self.schedule(
                self.dryrun_component(component, component_args, scheduler, cfg, workspace, parent_run_id)
            )

    def dryrun_component(
        self,
        component: str,
        component_args: Union[List[str], Dict[str, Any], None],
        scheduler: str,
        cfg: Optional[Mapping[str, CfgVal]] = None,
        workspace: Optional[str] = None,
        parent_run_id: Optional[str] = None,
    ) -> AppDryRunInfo:
        args: Any = json.dumps(component_args) if isinstance(component_args, dict) else component_args
        if _is_python_component(component):
            app = _python_component_app(component, component_args)
            return self.dryrun(app, scheduler, cfg, workspace)
        with _workspace_dir(workspace, None) as ws_dir:
            return _dryrun_info(self._core.dryrun_component(component, args, scheduler, dict(cfg or {}), ws_dir))

    def schedule(self, dryrun_info: AppDryRunInfo) -> AppHandle:
        """Submits a dry run's request (possibly edited by the caller through ``request``)."""
        if dryrun_info._core is None:
            raise ValueError("schedule: this AppDryRunInfo was not made by Runner.dryrun")
        with log_event("schedule", dryrun_info._scheduler, app_image=_first_image(dryrun_info._app)) as ev:
            handle = self._core.schedule(dryrun_info._core)
            ev._torchx_event.app_id = _app_id(handle)
            return handle

    # ---- follow ----

    def status(self, app_handle: AppHandle) -> Optional[AppStatus]:
        """The app's status, or None when its scheduler does not know it."""
        with log_event("status", *_event_target(app_handle)):
            return status_from_core(self._core.status(app_handle))

    def wait(self, app_handle: AppHandle, wait_interval: float = 10) -> Optional[AppStatus]:
        """Blocks until the app is terminal. The local scheduler wakes this at once;
        ``wait_interval`` bounds the polling of back-ends that cannot notify."""
        with log_event("wait", *_event_target(app_handle)):
            return status_from_core(self._core.wait(app_handle, float(wait_interval), None))

    def cancel(self, app_handle: AppHandle) -> None:
        """Requests cancellation and returns; nothing for unknown or finished apps."""
        with log_event("cancel", *_event_target(app_handle)):
            self._core.cancel(app_handle)

    def stop(self, app_handle: AppHandle) -> None:
        """Deprecated alias of cancel (TorchX's name; older Ax versions call it)."""
        warnings.warn("Runner.stop is deprecated, use Runner.cancel", DeprecationWarning, stacklevel=2)
        self.cancel(app_handle)

    def delete(self, app_handle: AppHandle) -> None:
        """Removes a finished app's record and logs."""
        with log_event("delete", *_event_target(app_handle)):
            self._core.delete(app_handle)

    def describe(self, app_handle: AppHandle) -> Optional[AppDef]:
        """The app as submitted, or None when unknown."""
        with log_event("describe", *_event_target(app_handle)):
            text = self._core.describe(app_handle)
            return None if text is None else from_json(json.loads(text))

    def log_lines(
        self,
        app_handle: AppHandle,
        role_name: str,
        k: int = 0,
        regex: Optional[str] = None,
        since: Optional[Any] = None,
        until: Optional[Any] = None,
        should_tail: bool = False,
        streams: Optional[Any] = None,
    ) -> Iterable[str]:
        """Lines of replica ``k`` of ``role_name`` (each ending in a newline where it had one).
        ``should_tail`` follows the log until the app finishes; ``streams``: None/"combined",
        "stdout" or "stderr" (TorchX's Stream enum values are accepted)."""
        stream = getattr(streams, "value", streams) or "combined"
        with log_event("log_lines", *_event_target(app_handle)):
            return self._core.log_lines(
                app_handle, role_name, k, regex, _epoch(since), _epoch(until), bool(should_tail), str(stream)
            )

    def list(self, scheduler: str, cfg: Optional[Mapping[str, CfgVal]] = None) -> "List[ListAppResponse]":
        """The apps ``scheduler`` knows (``cfg``: accepted as in TorchX; the built-in back-ends
        list from their own state and need none)."""
        from torchx.schedulers.api import ListAppResponse  # here: importing the runner stays cheap

        with log_event("list", scheduler, runcfg=_cfg_text(cfg)):
            return [
                ListAppResponse(app_id, AppState(state), handle, name)
                for app_id, state, handle, name in self._core.list(scheduler)
            ]

    # ---- introspection ----

    def scheduler_backends(self) -> List[str]:
        return list(self._core.scheduler_backends())

    def scheduler_run_opts(self, scheduler: str) -> runopts:
        return runopts._from_json(self._core.runopts(scheduler))

    def cfg_from_str(self, scheduler: str, *cfg_literal: str) -> Dict[str, Any]:
        """``-cfg`` strings parsed against ``scheduler``'s options (later strings win); a
        malformed string raises InvalidRunConfigException, a ValueError."""
        cfg: Dict[str, Any] = {}
        for text in cfg_literal:
            cfg.update(core().scheduler_cfg_from_str(scheduler, text))
        return cfg

    def run_opts(self) -> Dict[str, runopts]:
        return {name: self.scheduler_run_opts(name) for name in self.scheduler_backends()}

    def __repr__(self) -> str:
        return f"Runner(name={self._name}, schedulers={self.scheduler_backends()})"


def get_runner(
    name: Optional[str] = None,
    component_defaults: Optional[Dict[str, Dict[str, str]]] = None,
    **scheduler_params: Any,
) -> Runner:
    """A Runner over every registered scheduler. ``name`` is the session name (default
    "torchx"); ``component_defaults`` are per-component argument defaults."""
    if name:
        warnings.warn("Custom session names are deprecated in TorchX; using it anyway", UserWarning, stacklevel=2)
    return Runner(name or "torchx", None, component_defaults, scheduler_params)


def log_event(*args: Any, **kwargs: Any) -> Any:
    # torchx.runner.events loads with the first call, not with the import of torchx.runner.
    from torchx.runner.events import log_event as event

    return event(*args, **kwargs)


def _event_target(app_handle: AppHandle) -> "tuple[str, Optional[str]]":
    # (scheduler, app_id) of a handle for its event; a malformed handle still gets one.
    scheduler, sep, rest = str(app_handle).partition("://")
    return (scheduler, rest.rpartition("/")[2]) if sep else ("", None)


def _app_id(app_handle: AppHandle) -> Optional[str]:
    return _event_target(app_handle)[1]


def _first_image(app: Any) -> Optional[str]:
    roles = getattr(app, "roles", None)  # the core reports a non-AppDef; the event must not fail first
    return getattr(roles[0], "image", None) if roles else None


def _cfg_text(cfg: Optional[Mapping[str, CfgVal]]) -> Optional[str]:
    return json.dumps(dict(cfg), default=str) if cfg else None


def _ws_text(workspace: Any) -> Optional[str]:
    return str(workspace) if workspace else None


def _dryrun_info(info: Any) -> AppDryRunInfo:
    out: AppDryRunInfo = AppDryRunInfo(info.request)
    out._app = from_json(json.loads(info.app_json))
    out._cfg = info.cfg
    out._scheduler = info.scheduler
    out._core = info
    return out


@contextlib.contextmanager
def _workspace_dir(workspace: Any, app: Optional[AppDef]) -> Iterator[str]:
    """The directory the core builds into the job ("" for none), from the ``workspace`` argument
    (a path, a file:// URL, or a Workspace) or else ``app.roles[0].workspace``, as TorchX. A
    Workspace of several projects, or one mapped to a sub-directory, is merged into a temporary
    directory that lives for the dry run (the build happens there)."""
    roles = list(getattr(app, "roles", None) or [])
    for i, role in enumerate(roles[1:], start=1):
        if getattr(role, "workspace", None):
            raise ValueError(
                f"roles[{i}].workspace: only the first role's workspace is built (roles[0].workspace, or the "
                "`workspace` argument); put the projects in one Workspace"
            )
    if not workspace and roles:
        workspace = getattr(roles[0], "workspace", None)
    if not workspace:
        yield ""
        return
    if not isinstance(workspace, Workspace):
        yield str(workspace)
        return
    if workspace.is_unmapped_single_project():
        yield next(iter(workspace.projects))
        return
    import tempfile

    with tempfile.TemporaryDirectory(suffix="_torchx_workspace") as outdir:
        workspace.merge_into(outdir)
        yield outdir


def _epoch(t: Any) -> Optional[float]:
    if t is None:
        return None
    if hasattr(t, "timestamp"):
        return float(t.timestamp())
    return float(t)


def _is_python_component(name: str) -> bool:
    # `path/to/file.py:fn` or `pkg.module:fn`; builtins and declarative files have no colon.
    return ":" in name


def _python_component_app(component: str, component_args: Any) -> AppDef:
    from torchx.components._loader import load_component_fn, call_component

    fn = load_component_fn(component)
    return call_component(fn, component_args)
