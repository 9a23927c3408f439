"""Runner: TorchX's Python API over the core's Runner.

Each method converts its arguments (AppDef -> JSON, cfg dict) and hands them to the core, which
validates, dry-runs, submits and answers by app handle. Handles are self-sufficient: the local
scheduler keeps its state on disk, so a Runner in another process (or after a restart) can
status, wait for, cancel or read the logs of any handle; Ax may therefore store only the handle.
"""

import contextlib
import warnings
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union, cast

if TYPE_CHECKING:
    from torchx.schedulers.api import ListAppResponse, Scheduler

from torchx._core import core
from torchx.schedulers import get_scheduler_factories
from torchx.tracker.api import get_configured_trackers
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


def __getattr__(name: str) -> Any:
    # TorchX's module logger, made on first use: logging (with traceback, threading and string)
    # is a tenth of this module's import time, and nothing here logs.
    if name == "logger":
        import logging

        globals()["logger"] = logging.getLogger(__name__)
        return globals()["logger"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# The package's own listing: Runner tells it apart from a replacement (see Runner.__init__).
_core_scheduler_factories = get_scheduler_factories


# scheduler_params of TorchX's local scheduler factory that change what runs: given to
# get_runner(), the local back-ends are TorchX's LocalScheduler objects (over the same durable
# back-end), which apply them.
_APPLIED_BY_PY_LOCAL = ("extra_paths", "image_provider_class")



def _warn_if_logs_have_no_times(app_handle: str) -> None:
    """As TorchX's schedulers do: where log lines carry no time (local_cwd), ``since``/``until``
    are ignored with a warning and every line is returned. (The CLI refuses them instead.)"""
    try:
        scheduler = app_handle.split("://", 1)[0]
        capabilities = core().scheduler_capabilities(scheduler)
    except Exception:  # an unknown scheduler: log_lines says so itself
        return
    if "log_timestamps" not in capabilities and "composite" not in capabilities:
        warnings.warn(
            f"since and/or until were given for {scheduler}, whose log lines carry no time: they are "
            "ignored and every line is returned",
            stacklevel=3,
        )

class Runner:
    """Submits apps to schedulers by name ("local_cwd", "local", ...) and follows them.

    Every call goes to the core's Runner, which validates, dry-runs, submits, waits and answers by
    app handle. Schedulers come from ``scheduler_factories`` (name -> ``factory(session_name,
    **scheduler_params)``), by default every scheduler the core registers. A factory of a core
    back-end (``get_scheduler_factories()``'s) stands for it; a factory that makes a Python
    ``Scheduler`` object (TorchX's scheduler classes, a test double, a wrapper) has the object made
    once per name and driven by the core as a plugin (torchx.plugins._scheduler_adapter), and
    closed with the Runner."""

    def __init__(
        self,
        name: str,
        scheduler_factories: Optional[Mapping[str, Any]] = None,
        component_defaults: Optional[Dict[str, Dict[str, str]]] = None,
        scheduler_params: Optional[Dict[str, object]] = None,
    ) -> None:
        self._name = "torchx" if name is None else name
        if scheduler_factories is None and get_scheduler_factories is not _core_scheduler_factories:
            # Replaced (tools and tests patch torchx.runner.api.get_scheduler_factories, as with
            # TorchX): its factories are the schedulers. The package's own lists every core back-end,
            # which the core resolves by name without listing (a listing discovers every plugin).
            scheduler_factories = get_scheduler_factories()
        self._scheduler_params: Dict[str, Any] = dict(scheduler_params or {})
        self._scheduler_instances: Dict[str, Any] = {}
        # None: every name is the core's. An empty mapping means no scheduler at all, as in TorchX.
        self._scheduler_factories: Optional[Dict[str, Any]] = None
        self._py_factories: Dict[str, Any] = {}  # name -> factory of a Python scheduler object
        core_schedulers: Optional[Dict[str, Any]] = None
        if scheduler_factories is not None and not scheduler_factories:
            self._scheduler_factories = {}
            core_schedulers = {}
        elif scheduler_factories is not None and not all(_core_backend(f) for f in scheduler_factories.values()):
            self._scheduler_factories = dict(scheduler_factories)
            core_schedulers = {}
            for sname, factory in self._scheduler_factories.items():
                backend = _core_backend(factory)
                if backend:
                    core_schedulers[sname] = backend
                else:
                    self._py_factories[sname] = factory
        elif any(k in self._scheduler_params for k in _APPLIED_BY_PY_LOCAL):
            from torchx.schedulers.local_scheduler import create_scheduler

            self._py_factories = {"local": create_scheduler, "local_cwd": create_scheduler}
            core_schedulers = {sname: sname for sname in core().scheduler_names()}
        for sname, factory in self._py_factories.items():
            core_schedulers[sname] = self._adapter_maker(sname, factory)  # type: ignore[index]
        self._params_checked = False
        self._core = core().Runner(self._name, component_defaults, core_schedulers)

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the Python scheduler objects this Runner made; apps on the core's back-ends
        live on without it."""
        instances = list(self._scheduler_instances.values())
        self._scheduler_instances.clear()  # the same dict the core's makers fill
        for sched in instances:
            sched.close()

    # ---- Python scheduler objects ----

    def _adapter_maker(self, scheduler: str, factory: Any) -> Any:
        # What the core calls to build `scheduler`. It holds the instances dict, not the Runner:
        # the core Runner keeps it, and a reference back would be a cycle no collector sees.
        instances, params = self._scheduler_instances, self._scheduler_params

        def make(session_name: str) -> Any:
            from torchx.plugins._scheduler_adapter import SchedulerAdapter

            sched = instances.get(scheduler)
            if sched is None:
                sched = instances[scheduler] = factory(session_name, **params)
            return SchedulerAdapter(sched, scheduler)

        return make

    def _is_py_object(self, scheduler: str) -> bool:
        """Whether ``scheduler`` is a Python scheduler object (given, or a torchx_plugins one)."""
        if scheduler in self._py_factories:
            return True
        if self._scheduler_factories is not None or scheduler in _CORE_SCHEDULER_CLASSES:
            return False
        from torchx.plugins import PluginType, registry

        return scheduler in registry().get(PluginType.SCHEDULER)

    def _scheduler(self, scheduler: str) -> "Scheduler":
        """The scheduler object for ``scheduler``, made once per Runner (TorchX's private helper,
        kept because tools built on TorchX call it: NeMo-Run's executors and experiment runner).
        The core's back-ends answer with their TorchX classes (``SlurmScheduler``,
        ``LocalScheduler``, ...), which drive the same core; KeyError, as TorchX, for an unknown
        name."""
        if scheduler in self._py_factories:  # the object the core drives (it shares the instances)
            return self._instance(scheduler, self._py_factories[scheduler])
        if self._scheduler_factories is not None and scheduler in self._scheduler_factories:
            factory = self._scheduler_factories[scheduler]
            backend = _core_backend(factory)
            return self._instance(scheduler, _CORE_SCHEDULER_CLASSES.get(backend or "", factory))
        if self._scheduler_factories is None:
            factory = _CORE_SCHEDULER_CLASSES.get(scheduler)
            if factory is None:
                from torchx.plugins import PluginType, registry

                factory = registry().get(PluginType.SCHEDULER).get(scheduler)
            if factory is not None:
                return self._instance(scheduler, factory)
        names = list(self._scheduler_factories or get_scheduler_factories())
        raise KeyError(f"Undefined scheduler backend: {scheduler}. Use one of: {names}")

    def _instance(self, scheduler: str, factory: Any) -> Any:
        sched = self._scheduler_instances.get(scheduler)
        if sched is None:
            sched = factory(self._name, **self._scheduler_params)
            self._scheduler_instances[scheduler] = sched
        return sched

    def _check_core_scheduler_params(self, scheduler: str) -> None:
        """``scheduler_params`` are held to TorchX's local scheduler factory when the core's local
        back-end runs (its ``cache_size`` must be > 0, ...), so that a parameter TorchX refuses
        is refused here too, though the durable back-end keeps no per-object app cache. The
        other back-ends' TorchX factories take any keyword."""
        if self._params_checked or not self._scheduler_params or scheduler not in ("local", "local_cwd"):
            return
        from torchx.schedulers.local_scheduler import create_scheduler

        create_scheduler(self._name, **self._scheduler_params).close()
        self._params_checked = True

    # ---- submit ----

    def run(
        self,
        app: AppDef,
        scheduler: str,
        cfg: Optional[Mapping[str, CfgVal]] = None,
        workspace: Union[str, Workspace, None] = None,
        parent_run_id: Optional[str] = None,
        *,
        dryrun: bool = False,
        managed: bool = False,
        max_recoveries: int = 3,
        recover_on: Sequence[str] = (),
        failover: Sequence[Union[str, Tuple[str, Mapping[str, CfgVal]]]] = (),
        start_timeout: Union[str, float, None] = None,
        checkpoint_dir: Optional[str] = None,
    ) -> Union[AppHandle, AppDryRunInfo, str]:
        """Dry-runs and submits ``app``; returns its handle ``{scheduler}://{session}/{app_id}``
        (with ``dryrun=True``, the dry run's info instead, nothing submitted).

        ``managed=True`` (``torchx run --managed``, docs/managed.md): a detached driver submits
        the app again after failures its scheduler classifies as infrastructure (a lost node, a
        preemption, an eviction, a dead supervisor), up to ``max_recoveries`` times per target,
        and fails over to each ``failover`` target in turn (``"slurm:partition=b"`` or
        ``("slurm", {"partition": "b"})``); ``recover_on`` adds causes (``user_error``,
        ``time_limit``, ...). Every attempt gets ``TORCHX_CHECKPOINT_DIR`` (``checkpoint_dir``)
        and ``TORCHX_RECOVERY_COUNT``. Returns ``managed://{session}/{id}`` (with ``dryrun=True``
        the plan's text)."""
        if managed:
            if workspace:
                raise ValueError("run: managed=True cannot take a workspace yet (each target would need its own build)")
            # One name or target given alone is one, not a sequence of characters.
            causes: List[str] = [recover_on] if isinstance(recover_on, str) else list(recover_on)
            one_pair = isinstance(failover, tuple) and len(failover) == 2 and isinstance(failover[1], Mapping)
            targets: List[Any] = [failover] if isinstance(failover, str) or one_pair else list(failover)
            for f in targets:
                if not (isinstance(f, str) or (isinstance(f, tuple) and len(f) == 2 and isinstance(f[0], str)
                                               and f[0] and isinstance(f[1], Mapping))):
                    raise ValueError(f"failover: {f!r} is neither \"SCHEDULER[:k=v,...]\" nor (scheduler, cfg dict)")
            import json  # here: importing the runner loads no json (test_record.py)

            # The kind's document: the app as a dry run builds it (TorchX's env, the trackers), its
            # options on `scheduler`, and the keys of a `managed:` block.
            block: Dict[str, Any] = {
                "max_recoveries": max_recoveries,
                "failover": [f if isinstance(f, str) else {"scheduler": f[0], "cfg": dict(f[1])} for f in targets],
            }
            if causes:
                block["recover_on"] = causes
            if start_timeout is not None:
                block["start_timeout"] = start_timeout
            if checkpoint_dir:
                block["checkpoint_dir"] = checkpoint_dir
            with log_event("run", scheduler, app_image=_first_image(app), runcfg=_cfg_text(cfg)):
                first = self._core.dryrun(app_to_core(app), scheduler, dict(cfg or {}), "", parent_run_id or "",
                                          list(get_configured_trackers().items()))
                document = dict(block, app=json.loads(first.app_json), cfg=dict(cfg or {}))
                # Not ASCII-escaped: the core reads it as YAML, which takes no surrogate escapes.
                return self._core.launch_composite("managed", json.dumps(document, ensure_ascii=False),
                                                   "run(managed=True)", scheduler, "{}", dryrun)
        with log_event("run", scheduler, app_image=_first_image(app), runcfg=_cfg_text(cfg), workspace=_ws_text(workspace)):
            info = self.dryrun(app, scheduler, cfg, workspace, parent_run_id)
            return info if dryrun else self._schedule(info, _first_image(app))

    def name(self) -> str:
        """The session name (the middle part of the handles this Runner makes)."""
        return self._name

    def dryrun(
        self,
        app: AppDef,
        scheduler: str,
        cfg: Optional[Mapping[str, CfgVal]] = None,
        workspace: Union[str, Workspace, None] = None,
        parent_run_id: Optional[str] = None,
    ) -> AppDryRunInfo:
        """Validates ``app`` and builds the scheduler's request without submitting it. ``workspace``
        (a local directory) is built into the app first where the scheduler supports it
        (local_docker: an image with the directory copied in). The caller's AppDef is not changed."""
        with log_event("dryrun", scheduler, app_image=_first_image(app), runcfg=_cfg_text(cfg), workspace=_ws_text(workspace)):
            # Read on every dry run, as TorchX (the configuration may change between runs).
            trackers = list(get_configured_trackers().items())
            if self._is_py_object(scheduler):
                # The object takes the caller's app (its overrides unresolved) and workspace as they
                # are, and returns its own AppDryRunInfo (torchx.plugins._scheduler_adapter).
                from torchx.plugins._scheduler_adapter import offered_dry_run

                with offered_dry_run(app, workspace) as offer:
                    info = self._core.dryrun(
                        app_to_core(app, resolve_overrides=False), scheduler, dict(cfg or {}), "",
                        parent_run_id or "", trackers,
                    )
                out = offer.info
                out._core = info
                return cast(AppDryRunInfo, out)
            self._check_core_scheduler_params(scheduler)
            with _workspace_dir(workspace, app) as ws_dir:
                info = self._core.dryrun(app_to_core(app), scheduler, dict(cfg or {}), ws_dir, parent_run_id or "", trackers)
            return _dryrun_info(info)

    def run_component(
        self,
        component: str,
        component_args: Union[List[str], Dict[str, Any], None],
        scheduler: str,
        cfg: Optional[Mapping[str, CfgVal]] = None,
        workspace: Union[str, Workspace, None] = None,
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
        workspace: Union[str, Workspace, None] = None,
        parent_run_id: Optional[str] = None,
    ) -> AppDryRunInfo:
        """The component's AppDef (built by the core, or by the Python component file), dry-run
        as ``dryrun`` does."""
        if _is_python_component(component):
            app = _python_component_app(component, component_args)
        else:
            from torchx.components._builtin import builtin_deprecation

            deprecation = builtin_deprecation(component)
            if deprecation:  # what calling the component's function warns (TorchX calls it)
                warnings.warn(deprecation, UserWarning, stacklevel=2)
            import json

            args: Any = json.dumps(component_args) if isinstance(component_args, dict) else component_args
            app = from_json(json.loads(self._core.component_app(component, args)))
        return self.dryrun(app, scheduler, cfg, workspace, parent_run_id)

    def schedule(self, dryrun_info: AppDryRunInfo) -> AppHandle:
        """Submits a dry run's request (possibly edited by the caller through ``request``)."""
        return self._schedule(dryrun_info, _first_image(dryrun_info._app))

    def _schedule(self, dryrun_info: AppDryRunInfo, app_image: Optional[str]) -> AppHandle:
        # run() names the image from the app it was given: the dry run's copy is not rebuilt.
        with log_event("schedule", dryrun_info._scheduler, app_image=app_image) as ev:
            if getattr(dryrun_info, "_core", None) is None:
                raise ValueError("schedule: this AppDryRunInfo was not made by Runner.dryrun")
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
            if text is None:
                return None
            import json

            return from_json(json.loads(text))

    def describe_native(self, app_handle: AppHandle) -> Optional[AppDryRunInfo]:
        """The request as the scheduler now holds it for a submitted app (the read-side twin of
        ``dryrun``, torchx-nightly's): its printable ``request``, ``_core.payload`` the back-end's
        structured form. None for an unknown app, or a scheduler that cannot read it back."""
        with log_event("describe_native", *_event_target(app_handle)):
            info = self._core.describe_native(app_handle)
            return None if info is None else _dryrun_info(info)

    def resource_usage(
        self, app_handle: AppHandle, since: Optional[float] = None, max_samples: int = 0
    ) -> Optional[Dict[str, Any]]:
        """Each replica's CPU, memory and GPU samples over time, as ``torchx status --resources
        --json`` prints them: ``{"interval_seconds", "gpu_note", "note", "replicas": [{"role",
        "replica_id", "host", "samples": [{"time", "cpu_percent", "rss_bytes", "processes",
        "gpus": [...]}]}], "hosts": [...]}``. ``since``: epoch seconds; ``max_samples``: the newest
        per replica (0: all kept). None for an unknown app; NotImplementedError for a scheduler
        that does not sample (not in TorchX: this launcher's own)."""
        with log_event("resource_usage", *_event_target(app_handle)):
            text = self._core.resource_usage(app_handle, since, max_samples)
            if text is None:
                return None
            import json

            return json.loads(text)

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
        if since is not None or until is not None:
            _warn_if_logs_have_no_times(app_handle)
        with log_event("log_lines", *_event_target(app_handle)):
            stream = getattr(streams, "value", streams) or "combined"
            return self._core.log_lines(
                app_handle, role_name, k, regex, _epoch(since), _epoch(until), bool(should_tail), str(stream)
            )

    def list(self, scheduler: str, cfg: Optional[Mapping[str, CfgVal]] = None) -> "List[ListAppResponse]":
        """The apps ``scheduler`` knows, with their handles (``cfg`` is TorchX's argument; the
        back-ends list from their own state)."""
        from torchx.schedulers.api import ListAppResponse  # here: importing the runner stays cheap

        with log_event("list", scheduler, runcfg=_cfg_text(cfg)):
            return [
                ListAppResponse(app_id, AppState(state), handle, name)
                for app_id, state, handle, name in self._core.list(scheduler)
            ]

    # ---- introspection ----

    def scheduler_backends(self) -> List[str]:
        """The schedulers an AppDef can be submitted to (TorchX's: its factories' names); the
        ``pipeline`` handle scheme is not one, though the Runner follows its handles."""
        if self._scheduler_factories is not None:
            return list(self._scheduler_factories)
        return list(get_scheduler_factories())

    def scheduler_run_opts(self, scheduler: str) -> runopts:
        return runopts._from_json(self._core.runopts(scheduler))

    def cfg_from_str(self, scheduler: str, *cfg_literal: str) -> Dict[str, Any]:
        """``-cfg`` strings parsed against ``scheduler``'s options (later strings win); a
        malformed string raises InvalidRunConfigException, a ValueError."""
        opts = self.scheduler_run_opts(scheduler)
        cfg: Dict[str, Any] = {}
        for text in cfg_literal:
            cfg.update(opts.cfg_from_str(text))
        return cfg

    def run_opts(self) -> Dict[str, runopts]:
        return {name: self.scheduler_run_opts(name) for name in self.scheduler_backends()}

    def __repr__(self) -> str:
        return f"Runner(name={self._name}, schedulers={self.scheduler_backends()})"


def _core_class_factory(module: str) -> Any:
    def create(session_name: str, **kwargs: Any) -> Any:
        import importlib

        return importlib.import_module(f"torchx.schedulers.{module}").create_scheduler(session_name, **kwargs)

    return create


# The TorchX classes of the core's back-ends, for Runner._scheduler.
_CORE_SCHEDULER_CLASSES: Dict[str, Any] = {
    "local": _core_class_factory("local_scheduler"),
    "local_cwd": _core_class_factory("local_scheduler"),
    "local_docker": _core_class_factory("docker_scheduler"),
    "slurm": _core_class_factory("slurm_scheduler"),
    "kubernetes": _core_class_factory("kubernetes_scheduler"),
    "ray": _core_class_factory("ray_scheduler"),
}


def get_runner(
    name: Optional[str] = None,
    component_defaults: Optional[Dict[str, Dict[str, str]]] = None,
    **scheduler_params: Any,
) -> Runner:
    """A Runner over every registered scheduler (``get_scheduler_factories()``). ``name`` is the
    session name (default "torchx"); ``component_defaults`` are per-component argument defaults;
    ``scheduler_params`` go to the factories of Python schedulers."""
    if name:
        warnings.warn("Custom session names are deprecated in TorchX; using it anyway", UserWarning, stacklevel=2)
    return Runner(name or "torchx", None, component_defaults, scheduler_params)


def _core_backend(factory: Any) -> Optional[str]:
    """The core back-end a factory from get_scheduler_factories() stands for; None for a factory
    of Python scheduler objects (a test double's attributes are not taken for one)."""
    name = getattr(factory, "_torchx_core_backend", None)
    return name if isinstance(name, str) else None


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
    if not cfg:
        return None
    import json  # here: `import torchx.runner` does not pay for json

    return json.dumps(dict(cfg), default=str)


def _ws_text(workspace: Any) -> Optional[str]:
    return str(workspace) if workspace else None


def _dryrun_info(info: Any) -> AppDryRunInfo:
    out: AppDryRunInfo = AppDryRunInfo(info.request)
    out._app_json = info.app_json  # made into the AppDef when first read
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
