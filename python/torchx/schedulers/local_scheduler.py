"""torchx.schedulers.local_scheduler: TorchX's ``LocalScheduler`` class, over the core's durable
local scheduler.

The class keeps TorchX's shape so that plugins can wrap (``create_scheduler``) and subclass it:
``submit_dryrun`` returns a ``PopenRequest`` (per replica: argv, env, cwd and log files) that the
caller may edit, and ``schedule`` runs exactly what the request says. The request is the core's
app plan (``local_plan``: macros, TorchX's env and PATH rules, GPU assignment); ``schedule``
hands the (edited) plan to the core's ``local`` back-end, whose supervisor owns the replicas. So
an app submitted here can also be followed from the CLI or another process
(``local://<session>/<app_id>``).

Where this object follows TorchX rather than the durable back-end: it answers ``describe`` and
``log_iter`` for apps it submitted or that the store knows, forgets apps it evicted from its
cache (``cache_size``), and ``close()`` stops the apps it started that still run and removes the
temporary log directories it made. Deliberate difference: ``list()`` lists the apps the store
keeps (TorchX's in-memory scheduler cannot list); see docs/compatibility.md.
"""

import abc
import json
import logging
import os
import pprint
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Set, cast

from torchx._core import backend_helper
from torchx.schedulers._core_backend import CoreBackend
from torchx.schedulers.api import DescribeAppResponse, ListAppResponse, Scheduler, Stream
from torchx.schedulers.ids import make_unique
from torchx.schedulers.structured_opts import StructuredOpts
from torchx.specs.api import (
    AppDef,
    AppDryRunInfo,
    AppState,
    CfgVal,
    Role,
    UnknownAppException,
    app_to_core,
    is_terminal,
    runopts,
)

log: logging.Logger = logging.getLogger(__name__)

ENV_CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"
STDOUT_LOG = "stdout.log"
STDERR_LOG = "stderr.log"
COMBINED_LOG = "combined.log"

AppId = str
AppName = str
RoleName = str

__all__ = [
    "COMBINED_LOG",
    "CWDImageProvider",
    "ENV_CUDA_VISIBLE_DEVICES",
    "ImageProvider",
    "LocalDirectoryImageProvider",
    "LocalOpts",
    "LocalScheduler",
    "LogIterator",
    "Opts",
    "PopenRequest",
    "ReplicaParam",
    "STDERR_LOG",
    "STDOUT_LOG",
    "SignalException",
    "create_scheduler",
    "make_unique",
]


class SignalException(Exception):
    """Raised (TorchX's contract) when a process running a LocalScheduler gets SIGTERM/SIGINT."""

    def __init__(self, msg: str, sigval: signal.Signals) -> None:
        super().__init__(msg)
        self.sigval = sigval


@dataclass
class ReplicaParam:
    """One replica's process: argv (entrypoint first), the environment it adds, its log files
    and the directory it starts in."""

    args: List[str]
    env: Dict[str, str]
    stdout: Optional[str] = None
    stderr: Optional[str] = None
    combined: Optional[str] = None
    cwd: Optional[str] = None


class ImageProvider(abc.ABC):
    """Turns a role's image into a directory on this host (its ``${img_root}``), the directory
    its replicas start in, and the program they run."""

    def fetch_role(self, role: Role) -> str:
        """``fetch(role.image)``; override to adjust the role while fetching."""
        return self.fetch(role.image)

    @abc.abstractmethod
    def fetch(self, image: str) -> str:
        """Makes ``image`` available here; returns its root directory ("" when there is none)."""

    def get_replica_param(
        self,
        img_root: str,
        role: Role,
        stdout: Optional[str] = None,
        stderr: Optional[str] = None,
        combined: Optional[str] = None,
    ) -> ReplicaParam:
        return ReplicaParam(
            [self.get_entrypoint(img_root, role), *role.args],
            role.env,
            stdout,
            stderr,
            combined,
            self.get_cwd(role.image),
        )

    def get_cwd(self, image: str) -> Optional[str]:
        """The replicas' working directory; None: the submitter's."""
        return None

    def get_entrypoint(self, img_root: str, role: Role) -> str:
        return os.path.join(img_root, role.entrypoint)


class LocalDirectoryImageProvider(ImageProvider):
    """The image is an existing directory (an absolute path): replicas start in it and a relative
    entrypoint is looked up there."""

    def __init__(self, cfg: Mapping[str, CfgVal]) -> None:
        pass

    def fetch(self, image: str) -> str:
        if not os.path.isabs(image) or not os.path.isdir(image):
            raise ValueError(
                f"image: `{image}` must be an absolute path to an existing directory (the local "
                "scheduler runs the role from it)"
            )
        return image

    def get_cwd(self, image: str) -> Optional[str]:
        return image

    def get_entrypoint(self, img_root: str, role: Role) -> str:
        return role.entrypoint


class CWDImageProvider(ImageProvider):
    """Ignores the image: replicas run from the current working directory (``local_cwd``)."""

    def __init__(self, cfg: Mapping[str, CfgVal]) -> None:
        pass

    def fetch(self, image: str) -> str:
        return os.getcwd()

    def get_cwd(self, image: str) -> Optional[str]:
        return os.getcwd()

    def get_entrypoint(self, img_root: str, role: Role) -> str:
        return role.entrypoint


@dataclass
class Opts(StructuredOpts):
    """Run options of LocalScheduler."""

    log_dir: Optional[str] = None
    """Directory for the replicas' stdout/stderr/combined log files (default: a temporary
    directory removed when the scheduler closes)."""

    prepend_cwd: bool = False
    """Put the working directory before the replica's PATH (default: after it)."""

    auto_set_cuda_visible_devices: bool = False
    """Give each replica of a GPU role its own CUDA_VISIBLE_DEVICES."""

    device: Optional[str] = None
    """A device plugin (a PJRT_DEVICE name, or LIBRARY with $PJRT_LIBRARY_PATH): each replica gets
    that device's environment."""

    kill_grace_seconds: float = 10.0
    """Seconds between SIGTERM and SIGKILL when stopping replicas."""

    resource_interval: float = 5.0
    """Seconds between samples of each replica's CPU, memory and GPU use; 0 turns sampling off."""

    state_dir: Optional[str] = None
    """Where app state is kept (default: $TORCHX_STATE_DIR or ~/.local/state/torchx)."""


LocalOpts = Opts


def _join_PATH(*paths: Optional[str]) -> str:
    """PATH entries joined with ':', skipping empty ones and stray ':' at their ends."""
    return os.pathsep.join(p.strip(os.pathsep) for p in paths if p and p.strip(os.pathsep))


@dataclass
class PopenRequest:
    """What ``schedule`` starts: per role, each replica's ``ReplicaParam`` and log directory."""

    app_id: AppId
    log_dir: str
    role_params: Dict[RoleName, List[ReplicaParam]]
    role_log_dirs: Dict[RoleName, List[str]]


class _LocalAppDef:
    """This scheduler's record of an app it started: where it logs, the state it last saw, and
    when that changed (the cache evicts the terminal app seen longest ago)."""

    def __init__(self, id: str, log_dir: str) -> None:
        self.id = id
        self.log_dir = log_dir
        self.state: AppState = AppState.PENDING
        self.last_updated: float = -1
        self.role_replicas: Dict[RoleName, List[Any]] = {}

    def set_state(self, state: AppState) -> None:
        self.state = state
        self.last_updated = time.time()

    def __repr__(self) -> str:
        return f"_LocalAppDef(id={self.id!r}, state={self.state.name}, log_dir={self.log_dir!r})"


class LocalScheduler(CoreBackend, Scheduler[Mapping[str, CfgVal]]):
    """Runs each replica as a process on this host (TorchX's ``local`` scheduler class); see the
    module's docstring for how it sits on the core's durable back-end."""

    # Subclasses written for TorchX 0.7.0 (NeMo-Run's PersistentLocalScheduler) set 0.7.0's
    # attributes in their own __init__ without calling this one: what this class adds is made on
    # first use (_tmp_dirs, _evicted_ids) instead of relying on __init__.

    def __init__(
        self,
        session_name: str,
        image_provider_class: Callable[[Mapping[str, CfgVal]], ImageProvider],
        cache_size: int = 100,
        extra_paths: Optional[List[str]] = None,
    ) -> None:
        super().__init__("local", session_name)
        if cache_size <= 0:
            raise ValueError(f"cache_size: must be greater than zero, got {cache_size}")
        self._apps: Dict[AppId, _LocalAppDef] = {}
        self._evicted_ids()
        self._image_provider_class = image_provider_class
        self._cache_size = cache_size
        self._extra_paths: List[str] = list(extra_paths or [])
        self._tmp_dirs()

    def _evicted_ids(self) -> Set[AppId]:
        return cast(Set[AppId], self.__dict__.setdefault("_evicted", set()))

    def _tmp_dirs(self) -> List[str]:
        """Temporary log directories this object made (``close()`` removes them)."""
        return cast(List[str], self.__dict__.setdefault("_tmp_log_dirs", []))

    # ---- options and dry run ----

    def _run_opts(self) -> runopts:
        return Opts.as_runopts()

    def _validate(self, app: AppDef, scheduler: str, cfg: Optional[Mapping[str, CfgVal]] = None) -> None:
        """Nothing: resources mean nothing to local processes (TorchX's rule)."""

    def _log_base(self, cfg: Opts) -> str:
        """``log_dir``, or a temporary directory that ``close()`` removes (a given ``log_dir`` is
        never removed)."""
        if cfg.log_dir:
            return str(cfg.log_dir)
        base = tempfile.mkdtemp(prefix="torchx_")
        self._tmp_dirs().append(base)
        log.info("log_dir is not set: logs go to %s, removed when the scheduler closes", base)
        return base

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo:
        request = self._to_popen_request(app, cfg)
        return AppDryRunInfo(request, lambda r: pprint.pformat(asdict(r), indent=2, width=80))

    def _to_popen_request(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> PopenRequest:
        opts = cfg if isinstance(cfg, Opts) else Opts.from_cfg(cfg)
        app_id = make_unique(app.name)
        provider = self._image_provider_class(cfg)
        base_log_dir = self._log_base(opts)  # the core puts the app in <base>/<session>/<app_id>

        # The provider decides each role's image root, directory and program; the core plans
        # the rest on a copy (the caller's AppDef is not touched).
        planned = app_to_core(app)
        plan_app = json.loads(planned)
        role_dirs: Dict[str, Dict[str, str]] = {}
        cwds: Dict[str, Optional[str]] = {}
        for role, role_json in zip(app.roles, plan_app["roles"]):
            img_root = provider.fetch_role(role)
            cwd = provider.get_cwd(role.image)
            cwds[role.name] = cwd
            role_dirs[role.name] = {"img_root": img_root, "cwd": cwd or os.getcwd()}
            role_json["entrypoint"] = provider.get_entrypoint(img_root, role)
            path = _join_PATH(*self._extra_paths, role.env.get("PATH"))
            if path:
                role_json.setdefault("env", {})["PATH"] = path
        inputs = {
            "app_id": app_id,
            "session": self.session_name,
            "cwd": os.getcwd(),
            "log_dir": base_log_dir,
            "prepend_cwd": bool(opts.prepend_cwd),
            "auto_set_cuda_visible_devices": bool(opts.auto_set_cuda_visible_devices),
            "visible_gpus": self._cuda_device_count() if opts.auto_set_cuda_visible_devices else 0,
            "role_dirs": role_dirs,
        }
        planned_reply = backend_helper("local_cwd", "plan", {"app": plan_app, "inputs": inputs})
        for warning in planned_reply.get("warnings", []):
            log.warning(warning)
        plan = planned_reply["plan"]
        request = _popen_request(plan, cwds)
        # Not dataclass fields: what `schedule` needs besides the editable request.
        request.__dict__["_plan"] = plan
        request.__dict__["_app_json"] = planned
        return request

    def _request_from_native(self, payload: Dict[str, Any]) -> PopenRequest:
        """The plan the supervisor runs as TorchX's PopenRequest (each replica's own directory)."""
        return _popen_request(payload, {})

    def _cuda_device_count(self) -> int:
        """GPUs on this host: the ``GPU `` lines of ``nvidia-smi -L`` (as the core's CUDA device
        plugin counts them: a MIG device is not a GPU index); 0 without the tool or when it fails.
        Read through ``subprocess.run``, as TorchX's LocalScheduler does, so tests can mock it."""
        try:
            result = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=True, timeout=30)
        except FileNotFoundError:
            log.warning("nvidia-smi not found: assuming this host has no GPUs")
            return 0
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as e:
            log.warning("nvidia-smi -L failed (%s): assuming this host has no GPUs", e)
            return 0
        return sum(1 for line in (result.stdout or "").splitlines() if line.startswith("GPU "))

    def _get_app_log_dir(self, app_id: str, cfg: Opts) -> str:
        """Where the app's logs go (TorchX's): ``<log_dir or a temporary directory>/<session>/<app_id>``;
        only a temporary base is removed by ``close()``."""
        return os.path.join(self._log_base(cfg), self.session_name, app_id)

    # ---- submit ----

    def schedule(self, dryrun_info: AppDryRunInfo) -> str:
        if len(self._apps) >= self._cache_size and not self._evict_lru():
            raise IndexError(
                f"cache_size: {self._cache_size} apps of this scheduler still run; wait for one to end "
                "or create the scheduler with a larger cache_size"
            )
        request: PopenRequest = dryrun_info.request
        plan = _plan_from_request(request)
        app_json = request.__dict__.get("_app_json")
        if not app_json:
            if dryrun_info._app is None:
                raise ValueError("this AppDryRunInfo carries no AppDef: schedule what submit_dryrun returned")
            app_json = app_to_core(dryrun_info._app)
        self._runner().schedule_request(self.backend, app_json, request.app_id, json.dumps(plan))
        record = _LocalAppDef(request.app_id, request.log_dir)
        record.set_state(AppState.RUNNING)
        self._apps[request.app_id] = record
        return request.app_id

    # ---- follow ----

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        if app_id in self._evicted_ids() and app_id not in self._apps:
            return None
        record = self._apps.get(app_id)
        desc = self._describe_core(app_id, f"file://{record.log_dir}" if record else None)
        if desc is not None and record is not None and record.state != desc.state:
            record.set_state(desc.state)
        return desc

    def log_iter(
        self,
        app_id: str,
        role_name: str,
        k: int = 0,
        regex: Optional[str] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
        should_tail: bool = False,
        streams: Optional[Stream] = None,
    ) -> Iterable[str]:
        """Lines of replica ``k``'s log (combined by default). ``since``/``until`` are ignored,
        as TorchX's local scheduler does: its log files carry no timestamps."""
        if since or until:
            log.warning("LocalScheduler.log_iter ignores since/until: all lines are returned")
        if app_id in self._evicted_ids() and app_id not in self._apps:
            raise UnknownAppException(self._handle(app_id))
        return self._log_lines_core(app_id, role_name, k, regex, None, None, should_tail, streams)

    def list(self, cfg: Optional[Mapping[str, CfgVal]] = None) -> List[ListAppResponse]:
        """The apps the local store keeps (any session, any process)."""
        return self._list_core()

    def _cancel_existing(self, app_id: str) -> None:
        """Stops the app and returns once its replicas are gone (TorchX's local cancel is
        synchronous: a describe right after it says CANCELLED)."""
        self._cancel_core(app_id)
        final = _wait_terminal(self, app_id)
        record = self._apps.get(app_id)
        if record is not None and final is not None:
            record.set_state(final)  # CANCELLED, or how it ended if it ended first

    # ---- the cache ----

    def _evict_lru(self) -> bool:
        """Forgets the terminal app whose state changed longest ago (the first one inserted on a
        tie); False when every app still runs."""
        for app_id, record in self._apps.items():
            if not is_terminal(record.state):
                self.describe(app_id)
        terminal = [r for r in self._apps.values() if is_terminal(r.state)]
        if not terminal:
            return False
        oldest = min(terminal, key=lambda r: r.last_updated)
        del self._apps[oldest.id]
        self._evicted_ids().add(oldest.id)
        log.debug("evicted app %s from the local scheduler's cache", oldest.id)
        return True

    def close(self) -> None:
        """Stops the apps this object started that still run, then removes the temporary log
        directories it made. Calling it again does nothing."""
        for app_id, record in list(self._apps.items()):
            if not is_terminal(record.state):
                status = self._status(app_id)
                if status is not None and not is_terminal(status.state):
                    self._cancel_existing(app_id)
        for d in self._tmp_dirs():
            shutil.rmtree(d, ignore_errors=True)
        self._tmp_dirs().clear()


def _wait_terminal(scheduler: LocalScheduler, app_id: str, timeout: float = 30) -> Optional[AppState]:
    """The state the app ends in (None if the store forgets it, or it still runs after
    ``timeout``): cancel and close() return once the replicas are gone."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = scheduler._status(app_id)
        if status is None or is_terminal(status.state):
            return None if status is None else status.state
        scheduler._runner().wait(scheduler._handle(app_id), 0.05, 0.5)
    return None


def _plan_from_request(request: PopenRequest) -> Dict[str, Any]:
    """The core's app plan for ``request`` as it is now: edits to argv, env, cwd, log
    directories, replicas or the app id are what runs."""
    plan = dict(request.__dict__.get("_plan") or {"kill_grace_seconds": 10.0, "roles": {}})
    plan["app_id"] = request.app_id
    plan["app_dir"] = request.log_dir
    roles = dict(plan.get("roles") or {})
    replicas = []
    for role_name, params in request.role_params.items():
        log_dirs = request.role_log_dirs.get(role_name, [])
        if len(log_dirs) != len(params):
            raise ValueError(
                f"role_log_dirs[{role_name!r}]: {len(log_dirs)} directories for {len(params)} replicas in role_params"
            )
        roles.setdefault(role_name, {"max_retries": 0, "retry_policy": "APPLICATION"})
        for i, (p, d) in enumerate(zip(params, log_dirs)):
            for name, file in (("stdout", STDOUT_LOG), ("stderr", STDERR_LOG), ("combined", COMBINED_LOG)):
                got = getattr(p, name)
                if got is not None and os.path.abspath(got) != os.path.join(os.path.abspath(d), file):
                    raise ValueError(
                        f"role_params[{role_name!r}][{i}].{name}: the local scheduler writes it to "
                        f"{os.path.join(d, file)} (the replica's log directory); got {got}"
                    )
            if not p.args:
                raise ValueError(f"role_params[{role_name!r}][{i}].args: empty (the first one is the program)")
            replicas.append(
                {
                    "role": role_name,
                    "replica_id": i,
                    "argv": [str(a) for a in p.args],
                    "env": {str(k): str(v) for k, v in p.env.items()},
                    "cwd": p.cwd or os.getcwd(),
                    "log_dir": d,
                    "error_file": os.path.join(d, "error.json"),
                }
            )
    plan["replicas"] = replicas
    plan["roles"] = {name: policy for name, policy in roles.items() if name in request.role_params}
    return plan


class LogIterator:
    """Lines of one replica's log (TorchX's name): everything written so far, then, with
    ``should_tail``, what follows until the app ends."""

    def __init__(
        self,
        app_id: str,
        role_name: str,
        k: int,
        scheduler: LocalScheduler,
        should_tail: bool = True,
        streams: Optional[Stream] = None,
    ) -> None:
        self._lines: Iterator[str] = iter(
            scheduler.log_iter(app_id, role_name, k, should_tail=should_tail, streams=streams)
        )

    def __iter__(self) -> "LogIterator":
        return self

    def __next__(self) -> str:
        return next(self._lines)


def _popen_request(plan: Dict[str, Any], cwds: Mapping[str, Optional[str]]) -> PopenRequest:
    # TorchX's request of one app: per role its replicas' argv, env, log files and directory
    # (`cwds`: the image provider's, else the plan's).
    role_params: Dict[str, List[ReplicaParam]] = {}
    role_log_dirs: Dict[str, List[str]] = {}
    for role in plan.get("roles", []):
        name = role["name"] if isinstance(role, dict) else role
        role_params.setdefault(name, [])
        role_log_dirs.setdefault(name, [])
    for r in plan["replicas"]:
        d = r["log_dir"]
        role_params.setdefault(r["role"], []).append(
            ReplicaParam(
                list(r["argv"]),
                dict(r["env"]),
                os.path.join(d, STDOUT_LOG),
                os.path.join(d, STDERR_LOG),
                os.path.join(d, COMBINED_LOG),
                cwds.get(r["role"], r.get("cwd")),
            )
        )
        role_log_dirs.setdefault(r["role"], []).append(d)
    return PopenRequest(plan["app_id"], plan["app_dir"], role_params, role_log_dirs)


def create_scheduler(
    session_name: str,
    cache_size: int = 100,
    extra_paths: Optional[List[str]] = None,
    image_provider_class: Callable[[Mapping[str, CfgVal]], ImageProvider] = CWDImageProvider,
    **kwargs: Any,
) -> LocalScheduler:
    return LocalScheduler(
        session_name=session_name,
        image_provider_class=image_provider_class,
        cache_size=cache_size,
        extra_paths=extra_paths,
    )
