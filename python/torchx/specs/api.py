"""The job model: AppDef, Role, Resource, mounts, AppState/AppStatus, macros, runopts, handles.

These are records with TorchX's names, fields and defaults, so that component files written for
TorchX build them unchanged; the ``dataclasses`` module reads them as dataclasses
(``torchx._record`` says why they are not made by it). Everything with rules behind it (validation, macro
substitution, handle parsing, status formatting, cfg resolution) is done by the C++ core; the
objects cross into it as the canonical AppDef JSON (``to_json`` / ``from_json`` below).
"""

import _thread
import contextlib
import functools
import os
from enum import Enum
from types import MappingProxyType
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    Generic,
    Iterator,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Tuple,
    Type,
    TypeVar,
    Union,
)

if TYPE_CHECKING:
    import pathlib

from torchx._core import core
from torchx._record import fields_of
if TYPE_CHECKING:  # type checkers know dataclasses, and records behave as they do
    from dataclasses import dataclass as record, field
else:
    from torchx._record import field, record
from torchx._exceptions import (
    AppStatusError,
    InvalidRunConfigException,
    MalformedAppHandleException,
    UnknownAppException,
    UnknownSchedulerException,
)

__all__ = [
    "ALL", "MISSING", "NONE", "NULL_RESOURCE", "AppDef", "AppDryRunInfo", "AppHandle", "AppState",
    "AppStatus", "AppStatusError", "BindMount", "CfgVal", "DeviceMount", "InvalidRunConfigException",
    "MalformedAppHandleException", "MountType", "ParsedAppHandle", "ReplicaState", "ReplicaStatus",
    "Resource", "RetryPolicy", "Role", "RoleStatus", "UnknownAppException", "UnknownSchedulerException",
    "VolumeMount", "get_type_name", "is_started", "is_terminal", "macros", "make_app_handle",
    "parse_app_handle", "runopt", "runopts", "TORCHX_HOME", "UNKNOWN", "Workspace", "cases",
]

ALL: str = "all"
MISSING: str = "<MISSING>"
NONE: str = "<NONE>"
# What a scheduler reports for an attribute it cannot read back (the literal is the contract:
# back-ends write it without importing torchx).
UNKNOWN: str = "<UNKNOWN>"


def TORCHX_HOME(*subdir_paths: str) -> "pathlib.Path":
    """TorchX's dot-directory (``$TORCHX_HOME``, default ``~/.torchx``) joined with
    ``subdir_paths``; created if missing."""
    import pathlib  # here: pathlib costs more import time than the rest of this module's needs

    home = pathlib.Path(os.environ.get("TORCHX_HOME") or (pathlib.Path.home() / ".torchx"))
    path = home.joinpath(*subdir_paths)
    path.mkdir(parents=True, exist_ok=True)
    return path

AppHandle = str
CfgVal = Union[str, int, float, bool, List[str], Dict[str, str], None]


class resource_tags:
    """``Resource.tags`` keys set on the resources of registered named resources; read them with
    ``Resource.get_resource_name()`` and ``Resource.is_fractional()``. (TorchX keeps this class in
    torchx.plugins, which still exports it; it lives here so that the specs need no plugin code.)"""

    RESOURCE_NAME: str = "torchx/named_resources.name"
    IS_FRACTIONAL: str = "torchx/named_resources.is_fractional"


@record
class Resource:
    """Resources one replica asks for. ``capabilities`` are scheduler-specific (e.g. instance
    type); ``devices`` maps a device name (``vpc.amazonaws.com/efa``) to a count."""

    cpu: int
    gpu: int
    memMB: int
    capabilities: Dict[str, Any] = field(default_factory=dict)
    devices: Dict[str, int] = field(default_factory=dict)
    tags: Dict[str, object] = field(default_factory=dict)

    def is_fractional(self) -> bool:
        """Whether this is a fractional slice of a registered named resource (its tag)."""
        return bool(self.tags.get(resource_tags.IS_FRACTIONAL, False))

    def get_resource_name(self) -> Optional[str]:
        """The named resource this was registered as, or None."""
        name = self.tags.get(resource_tags.RESOURCE_NAME)
        return None if name is None else str(name)

    @staticmethod
    def copy(original: "Resource", **capabilities: Any) -> "Resource":
        """A copy of ``original`` with ``capabilities`` merged over its own."""
        res_capabilities = dict(original.capabilities)
        res_capabilities.update(capabilities)
        return Resource(
            cpu=original.cpu,
            gpu=original.gpu,
            memMB=original.memMB,
            capabilities=res_capabilities,
            devices=dict(original.devices),
            tags=dict(original.tags),
        )


NULL_RESOURCE: Resource = Resource(cpu=-1, gpu=-1, memMB=-1)


def _null_resource() -> Resource:
    return Resource(cpu=-1, gpu=-1, memMB=-1)  # NULL_RESOURCE's values, in containers of its own


class macros:
    """Placeholders in ``Role.args``, ``Role.env`` values and ``Role.metadata`` that the
    scheduler fills in when it launches each replica."""

    img_root = "${img_root}"
    base_img_root = "${base_img_root}"
    app_id = "${app_id}"
    replica_id = "${replica_id}"
    rank0_env = "${rank0_env}"

    @record
    class Values:
        img_root: str
        app_id: str
        replica_id: str
        rank0_env: str
        base_img_root: str = "DEPRECATED"

        def apply(self, role: "Role") -> "Role":
            """A copy of ``role`` with the macros substituted (args, env values, metadata)."""
            import json

            app = AppDef(name="macros", roles=[role])
            out = from_json(
                json.loads(
                    core().macros_apply(
                        json.dumps(to_json(app)), self.img_root, self.app_id, self.replica_id, self.rank0_env
                    )
                )
            ).roles[0]
            # The copy shares the caller's overrides dict (resolving on either resolves for both);
            # a dict holding nothing but its lock counts as empty.
            if any(k != _OVERRIDES_LOCK_KEY for k in role.overrides):
                out.overrides = role.overrides
            return out

        def to_dict(self) -> Dict[str, Any]:
            return _fields_dict(self)

        def substitute(self, arg: str) -> str:
            """``string.Template.safe_substitute`` of the macros in ``arg``."""
            return core().macros_substitute(arg, self.img_root, self.app_id, self.replica_id, self.rank0_env)


class RetryPolicy(str, Enum):
    """What a replica failure restarts: the REPLICA, its ROLE, or the whole APPLICATION."""

    REPLICA = "REPLICA"
    APPLICATION = "APPLICATION"
    ROLE = "ROLE"


class MountType(str, Enum):
    BIND = "bind"
    VOLUME = "volume"
    DEVICE = "device"


@record
class BindMount:
    src_path: str
    dst_path: str
    read_only: bool = False


@record
class VolumeMount:
    src: str
    dst_path: str
    read_only: bool = False


@record
class DeviceMount:
    src_path: str
    dst_path: str
    permissions: str = "rwm"


@record
class Workspace:
    """Local project directories mirrored into a job: ``{local_path: remote_subdir}`` ("" puts the
    project at the root of the job's workspace)."""

    projects: Dict[str, str]

    def __bool__(self) -> bool:
        return bool(self.projects)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Workspace) and self.projects == other.projects

    def __hash__(self) -> int:
        return hash(frozenset(self.projects.items()))

    def is_unmapped_single_project(self) -> bool:
        """One project, copied to the root (no sub-directory)."""
        return len(self.projects) == 1 and not next(iter(self.projects.values()))

    def merge_into(self, outdir: "Union[str, pathlib.Path]") -> None:
        """Copies every project into ``outdir/<remote_subdir>`` (files and directory trees)."""
        import pathlib
        import shutil

        for src, dst in self.projects.items():
            target = pathlib.Path(outdir) / dst
            if pathlib.Path(src).is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, target)
            else:
                shutil.copytree(src, target, dirs_exist_ok=True)

    @staticmethod
    def from_str(workspace: Optional[str]) -> "Workspace":
        """``"/path"`` (one project at the root), ``"/path: sub"``, or a YAML mapping of several
        ``path: subdir`` lines (an empty subdir means the root)."""
        if not workspace:
            return Workspace({})
        import yaml  # only here: a plain path needs no YAML, and yaml costs import time

        parsed = yaml.safe_load(workspace)
        if isinstance(parsed, str):
            return Workspace({parsed: ""})
        if not isinstance(parsed, dict):
            raise ValueError(
                f"workspace: `{workspace}` is neither a path nor a mapping of `path: subdir` lines"
            )
        return Workspace({str(k): "" if v is None else str(v) for k, v in parsed.items()})

    def __str__(self) -> str:
        # For logs only (from_str does not read it back).
        if self.is_unmapped_single_project():
            return next(iter(self.projects))
        return ";".join(f"{k}:{v}" if v else k for k, v in self.projects.items())


# ---- lazy Role fields (TorchX's Role.overrides) ----
#
# ``Role.overrides`` maps a field name to a producer (a callable or an awaitable) that gives the
# field's value on first read. The result is written back into the same dict, wrapped, so roles
# sharing one dict (copies of a role share it) resolve each producer once; the field itself is
# never assigned. Resolution is single-flight per dict under a re-entrant lock kept in the dict
# under a key no attribute can have, so a producer may read other lazy fields of the same role
# (from its own thread: an awaitable read inside a running event loop is driven on a worker
# thread, and a producer there that reads another lazy field of the same role would wait for the
# lock its caller holds; TorchX has the same limit).

_NO_OVERRIDE: Any = object()
_OVERRIDES_LOCK_KEY: str = "<overrides resolution lock>"
_lock_minting = _thread.allocate_lock()  # held only to put a dict's lock in place, never while resolving


class _OverridesLock:
    """The dict entry holding an overrides dict's resolution lock."""

    __slots__ = ("lock",)

    def __init__(self) -> None:
        self.lock = _thread.RLock()

    def __deepcopy__(self, memo: Dict[int, object]) -> "_OverridesLock":
        # A lock cannot be copied; a deep copy of the dict keeps resolving in step with its source.
        return self


class _ResolvedOverride:
    """A resolved value in an overrides dict (so a value that happens to be callable is never
    called again). Calling it returns the value: code that reads the raw dict and calls the entry
    keeps working after resolution."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __call__(self) -> object:
        return self.value


def _resolution_lock(ov: Dict[str, Any]) -> Any:
    holder = ov.get(_OVERRIDES_LOCK_KEY)
    if holder is None:
        with _lock_minting:
            holder = ov.get(_OVERRIDES_LOCK_KEY)
            if holder is None:
                holder = ov[_OVERRIDES_LOCK_KEY] = _OverridesLock()
    return holder.lock


def _await_in_new_loop(aw: Any) -> Any:
    import asyncio  # only here: importing it costs more than the rest of torchx.specs

    async def wait() -> Any:
        return await aw

    # Not asyncio.run: it resets the thread's current event loop when it finishes.
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(wait())
    finally:
        loop.close()


def _resolve_awaitable(attrname: str, aw: Any) -> Any:
    """The value of an awaitable override, read synchronously from any thread or loop context."""
    import asyncio
    import concurrent.futures

    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    bound = aw.get_loop() if hasattr(aw, "get_loop") else None  # futures and tasks have a loop
    if bound is None:
        if running is None:
            return _await_in_new_loop(aw)
        # Inside a running loop a coroutine cannot be driven here: a worker thread gets its own.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(_await_in_new_loop, aw).result()
    if bound is running:
        raise RuntimeError(
            f"override `{attrname}` is bound to the event loop currently running in this thread;"
            " `await` it instead of reading the attribute"
        )

    async def wait() -> Any:
        return await aw

    if bound.is_running():  # another thread's loop completes it
        return asyncio.run_coroutine_threadsafe(wait(), bound).result()
    if running is None:
        return bound.run_until_complete(aw)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(bound.run_until_complete, aw).result()


def _resolve_override(ov: Dict[str, Any], attrname: str) -> Any:
    with _resolution_lock(ov):
        producer = ov[attrname]
        if isinstance(producer, _ResolvedOverride):  # another reader got here first
            return producer.value
        import inspect  # only here: overrides are rare, and inspect costs import time

        # A producer that raises stays in the dict for the next read.
        if inspect.isawaitable(producer):
            value = _resolve_awaitable(attrname, producer)
        elif callable(producer):
            value = producer()
        else:  # a plain value (TorchX would fail calling it): taken as the field's value
            value = producer
        ov[attrname] = _ResolvedOverride(value)
        return value


_object_getattribute = object.__getattribute__


@record
class Role:
    """A set of identical replicas: what runs (image, entrypoint, args, env), how many, with
    what resources and retry behaviour. Fields, order and defaults as TorchX HEAD's."""

    name: str
    image: str
    min_replicas: Optional[int] = None
    entrypoint: str = MISSING
    args: List[str] = field(default_factory=list)
    env: Dict[str, str] = field(default_factory=dict)
    num_replicas: int = 1
    max_retries: int = 0
    retry_policy: RetryPolicy = RetryPolicy.APPLICATION
    resource: Resource = field(default_factory=_null_resource)
    port_map: Dict[str, int] = field(default_factory=dict)
    metadata: Dict[str, Any] = field(default_factory=dict)
    mounts: List[Union[BindMount, VolumeMount, DeviceMount]] = field(default_factory=list)
    # Local projects mirrored into the job (the Runner's `workspace` argument overrides roles[0]'s).
    workspace: Optional[Workspace] = None
    # Lazy field values, see above. Never sent to the core: reading the fields to build the JSON
    # resolves them, so the core sees the values.
    overrides: Dict[str, Any] = field(default_factory=dict)
    # TorchX 0.7's field, gone in HEAD; keyword-only so that HEAD's positional order holds and
    # 0.7 component files passing it by name still load. Read by nothing.
    base_image: Optional[str] = field(default=None, kw_only=True)

    def __getattribute__(self, attrname: str) -> Any:
        # Every read of every Role attribute comes through here, so the common case (no override
        # for it) is one dict lookup; __dict__ lacks "overrides" only inside __init__.
        ov = _object_getattribute(self, "__dict__").get("overrides")
        if ov and attrname != "overrides":
            value = ov.get(attrname, _NO_OVERRIDE)
            if value is not _NO_OVERRIDE:
                if isinstance(value, _ResolvedOverride):  # resolved: no lock
                    return value.value
                return _resolve_override(ov, attrname)
        return _object_getattribute(self, attrname)

    def pre_proc(self, scheduler: str, dryrun_info: "AppDryRunInfo") -> "AppDryRunInfo":
        """Hook called per role by Scheduler.submit_dryrun, in role order; the identity here,
        for subclasses to adjust the request."""
        return dryrun_info


@record
class AppDef:
    """An application: a name and its roles."""

    name: str
    roles: List[Role] = field(default_factory=list)
    metadata: Dict[str, str] = field(default_factory=dict)


class AppState(int, Enum):
    """The state of an app (TorchX's values: they appear in JSON and in Ax's mapping)."""

    UNSUBMITTED = 0
    SUBMITTED = 1
    PENDING = 2
    RUNNING = 3
    SUCCEEDED = 4
    FAILED = 5
    CANCELLED = 6
    UNKNOWN = 7

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"{self.name} ({self.value})"


_TERMINAL_STATES = (AppState.SUCCEEDED, AppState.FAILED, AppState.CANCELLED)
_STARTED_STATES = _TERMINAL_STATES + (AppState.RUNNING,)


def is_terminal(state: AppState) -> bool:
    return state in _TERMINAL_STATES


def is_started(state: AppState) -> bool:
    return state in _STARTED_STATES


ReplicaState = AppState


@record
class ReplicaStatus:
    """One replica's state. ``id`` is the node index in the role (not the rank); ``hostaddr`` is
    the name or IP other replicas reach it by, the hostname unless a scheduler knows better."""

    id: int
    state: ReplicaState
    role: str
    hostname: str
    structured_error_msg: str = NONE
    hostaddr: Optional[str] = None

    def __post_init__(self) -> None:
        if self.hostaddr is None:
            self.hostaddr = self.hostname


@record
class RoleStatus:
    role: str
    replicas: List[ReplicaStatus]

    def to_json(self) -> Dict[str, Any]:
        return {"role": self.role, "replicas": [_fields_dict(r) for r in self.replicas]}


@record
class AppStatus:
    """What a scheduler reports about an app."""

    state: AppState
    num_restarts: int = 0
    msg: str = ""
    structured_error_msg: str = NONE
    ui_url: Optional[str] = None
    roles: List[RoleStatus] = field(default_factory=list)

    def is_terminal(self) -> bool:
        return is_terminal(self.state)

    def __repr__(self) -> str:
        # TorchX's form: YAML of the fields, the state as `FAILED (5)`, an error file's JSON
        # embedded as data (or as text when it is not JSON).
        import json
        from dataclasses import asdict

        import yaml  # only here: it is the slowest import of all and only repr needs it

        fields_ = asdict(self)
        err = fields_.pop("structured_error_msg")
        if err != NONE:
            try:
                err = json.loads(err)
            except ValueError:
                pass
        fields_["structured_error_msg"] = err
        fields_["state"] = repr(self.state)
        for role in fields_["roles"]:
            for replica in role["replicas"]:
                replica["state"] = int(replica["state"])
        return yaml.dump({"AppStatus": fields_})

    def _format_error_message(self, msg: str, header: str, width: int = 80) -> str:
        """An error message as ``torchx status`` prints it: the RPC error or the message before a
        nested "Exception" line only, wrapped at ``width`` with ``header`` before the first line."""
        if len(header) >= width:
            raise ValueError(f"header {header!r} (len {len(header)}) must be shorter than width {width}")
        return core().format_error_message(msg, header, width)

    def raise_for_status(self) -> None:
        """Raises AppStatusError unless the app SUCCEEDED."""
        if self.state != AppState.SUCCEEDED:
            raise AppStatusError(self, f"job did not succeed: {self}")

    def to_json(self, filter_roles: Optional[List[str]] = None) -> Dict[str, Any]:
        roles = [r for r in self.roles if not filter_roles or r.role in filter_roles]
        return {
            "state": str(self.state),
            "num_restarts": self.num_restarts,
            "roles": [r.to_json() for r in roles],
            "msg": self.msg,
            "structured_error_msg": self.structured_error_msg,
            "url": self.ui_url,
        }

    def format(self, filter_roles: Optional[List[str]] = None) -> str:
        """TorchX's human-readable status block (``torchx status`` prints the same)."""
        import json

        return core().format_app_status(json.dumps(self.to_json(), default=str), list(filter_roles or []))


T = TypeVar("T")


class AppDryRunInfo(Generic[T]):
    """What a dry run produced: the request the scheduler would submit (printable), and the app
    and cfg it was made from."""

    def __init__(self, request: T, fmt: Any = str) -> None:
        self.request = request
        self._fmt = fmt
        self._app_value: Optional[AppDef] = None
        self._app_json: Optional[str] = None  # the core's AppDef, made into _app when first read
        self._cfg: Mapping[str, CfgVal] = {}
        self._scheduler: Optional[str] = None
        self._core: Any = None  # the core's DryRunInfo, submitted by Runner.schedule

    @property
    def _app(self) -> Optional[AppDef]:
        # TorchX's attribute, which tools read. Built from the core's JSON when first read:
        # `Runner.run` submits without reading it.
        if self._app_value is None and self._app_json is not None:
            import json

            self._app_value = from_json(json.loads(self._app_json))
            self._app_json = None
        return self._app_value

    @_app.setter
    def _app(self, app: Optional[AppDef]) -> None:
        self._app_value = app
        self._app_json = None

    @property
    def app(self) -> Optional[AppDef]:
        """The AppDef the dry run was made from (None until a dry run sets it)."""
        return self._app

    @property
    def cfg(self) -> Mapping[str, CfgVal]:
        """The resolved run config, read-only."""
        return MappingProxyType(self._cfg)

    def __repr__(self) -> str:
        return self._fmt(self.request)


def get_type_name(tp: Type[CfgVal]) -> str:
    """``int``, ``list``, ... for plain classes; ``typing.List[int]`` etc. for typing forms."""
    if getattr(tp, "__module__", None) != "typing" and hasattr(tp, "__name__"):
        return tp.__name__
    return str(tp)


class cases:
    """Run option names in either spelling: ``cluster_name`` <-> ``clusterName`` (the core's
    rules, which runopts resolution and ``-cfg`` use too)."""

    @staticmethod
    def snake_to_camel(name: str) -> str:
        return core().snake_to_camel(name)

    @staticmethod
    def camel_to_snake(name: str) -> str:
        return core().camel_to_snake(name)


_CFG_TYPES: Dict[str, Any] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "typing.List[str]": List[str],
    "typing.Dict[str, str]": Dict[str, str],
}
_CFG_TYPE_NAMES = {v: k for k, v in _CFG_TYPES.items()}
_CFG_TYPE_NAMES.update({list: "typing.List[str]", dict: "typing.Dict[str, str]",
                        list[str]: "typing.List[str]", dict[str, str]: "typing.Dict[str, str]"})


@record
class runopt:
    """One run option: its default, type, whether it is required, and its help."""

    default: CfgVal
    opt_type: Type[CfgVal]
    is_required: bool
    help: str

    @property
    def is_type_list_of_str(self) -> bool:
        return _CFG_TYPE_NAMES.get(self.opt_type) == "typing.List[str]"

    @property
    def is_type_dict_of_str(self) -> bool:
        return _CFG_TYPE_NAMES.get(self.opt_type) == "typing.Dict[str, str]"

    def cast_to_type(self, value: str) -> CfgVal:
        """The option's value from its ``-cfg`` text (the core's rules): bools take
        true/1/yes/on and false/0/no/off (any case, nothing else), lists ``a,b`` or ``a;b``,
        dicts ``k:v,k2:v2``; ValueError naming the text otherwise."""
        if self.opt_type is None:
            raise ValueError("runopt's opt_type cannot be `None`")
        import json

        one = json.dumps([{"name": "value", "type": _type_name(self.opt_type), "help": "", "default": None,
                           "required": False}])
        return core().runopt_cast(one, value)


def _type_name(tp: Any) -> str:
    try:
        return _CFG_TYPE_NAMES[tp]
    except (KeyError, TypeError):
        raise TypeError(
            f"run option type must be one of str, int, float, bool, List[str], Dict[str, str]; got {get_type_name(tp)}"
        ) from None


def _empty_as(default: CfgVal, type_name: str) -> CfgVal:
    # TorchX accepts `[]` as the default of a dict option (its type check only looks at the
    # elements): an empty container of the other kind is taken as the empty one of this kind.
    if default == [] and type_name == "typing.Dict[str, str]":
        return {}
    if default == {} and type_name == "typing.List[str]":
        return []
    return default


class runopts:
    """A scheduler's run options: name -> type, default, required, help. Resolution, ``-cfg``
    parsing and rendering are the core's (the CLI uses the same code)."""

    def __init__(self) -> None:
        self._opts: Dict[str, runopt] = {}

    def __iter__(self) -> Iterator[Tuple[str, runopt]]:
        return iter(self._opts.items())

    def __len__(self) -> int:
        return len(self._opts)

    def __or__(self, other: "runopts") -> "runopts":
        """A new runopts with this one's options and then ``other``'s."""
        merged = runopts()
        merged._opts = {**self._opts, **other._opts}
        return merged

    @staticmethod
    def is_type(obj: CfgVal, tp: Type[CfgVal]) -> bool:
        """``isinstance`` that also understands ``List[str]`` and ``Dict[str, str]``."""
        try:
            return isinstance(obj, tp)
        except TypeError:  # a generic alias
            if isinstance(obj, list):
                return all(isinstance(e, str) for e in obj)
            if isinstance(obj, dict):
                return all(isinstance(k, str) and isinstance(v, str) for k, v in obj.items())
            return False

    def get(self, name: str) -> Optional[runopt]:
        """The option ``name`` (a camelCase name finds its snake_case option), or None."""
        opt = self._opts.get(name)
        if opt is None:
            snake = cases.camel_to_snake(name)
            if snake != name:
                opt = self._opts.get(snake)
        return opt

    def add(self, cfg_key: str, type_: Type[CfgVal], help: str, default: CfgVal = None, required: bool = False) -> None:
        """Declares an option. TypeError for an unsupported type or a default of another type;
        ValueError for a required option with a default."""
        _type_name(type_)
        if default is not None and not runopts.is_type(default, type_):
            raise TypeError(
                f"Option: {cfg_key}, must be of type: {get_type_name(type_)}. Given: {default} ({type(default).__name__})"
            )
        previous = self._opts.get(cfg_key)
        self._opts[cfg_key] = runopt(default, type_, required, help)
        try:
            core().runopts_render(self._to_json())  # the core checks required-with-default
        except Exception:
            if previous is None:
                del self._opts[cfg_key]
            else:
                self._opts[cfg_key] = previous
            raise

    def update(self, other: "runopts") -> None:
        self._opts.update(other._opts)

    def resolve(self, cfg: Mapping[str, CfgVal], *, ignore_unknown: bool = False) -> Dict[str, CfgVal]:
        """Fills defaults, checks required options and types (InvalidRunConfigException);
        camelCase keys stand for their snake_case options. An unknown key is refused, naming the
        valid options (torchx-nightly); ``ignore_unknown=True`` lets it through unchecked."""
        return core().runopts_resolve(self._to_json(), dict(cfg), ignore_unknown)

    def cfg_from_str(self, cfg_str: str) -> Dict[str, CfgVal]:
        """Parses ``k1=v1,k2=v2;k3=a,b`` (the ``-cfg`` syntax), casting each option to its type;
        an unknown key is refused (InvalidRunConfigException naming the valid options)."""
        return core().runopts_cfg_from_str(self._to_json(), cfg_str)

    def cfg_from_json_repr(self, json_repr: str) -> Dict[str, CfgVal]:
        """A cfg from its JSON: declared options only, list and dict items as strings."""
        import json

        cfg: Dict[str, CfgVal] = {}
        for key, value in json.loads(json_repr).items():
            opt = self.get(key)
            if opt is None:
                continue
            if value is not None and opt.is_type_list_of_str:
                value = [str(v) for v in value]
            elif value is not None and opt.is_type_dict_of_str:
                value = {str(k): str(v) for k, v in value.items()}
            cfg[key] = value
        return cfg

    def __repr__(self) -> str:
        return core().runopts_render(self._to_json())

    def _to_json(self) -> str:
        import json

        return json.dumps(
            [
                {
                    "name": name,
                    "type": _type_name(o.opt_type),
                    "help": o.help,
                    "default": _empty_as(o.default, _type_name(o.opt_type)),
                    "required": o.is_required,
                }
                for name, o in self._opts.items()
            ]
        )

    @staticmethod
    def _from_json(text: str) -> "runopts":
        import json

        opts = runopts()
        for o in json.loads(text):
            opts._opts[o["name"]] = runopt(o["default"], _CFG_TYPES[o["type"]], o["required"], o["help"])
        return opts


class ParsedAppHandle(NamedTuple):
    scheduler_backend: str
    session_name: str
    app_id: str


def parse_app_handle(app_handle: AppHandle) -> ParsedAppHandle:
    """``{scheduler}://{session_name}/{app_id}`` -> parts (MalformedAppHandleException)."""
    return ParsedAppHandle(*core().parse_app_handle(app_handle))


def make_app_handle(scheduler_backend: str, session_name: str, app_id: str) -> AppHandle:
    return core().make_app_handle(str(scheduler_backend), str(session_name), str(app_id))


# ---- canonical JSON form (the core's AppDef JSON) ----
#
# The field lists are the records' own (``fields_of``): a field added to a record class
# crosses with no edit here, and the tables below hold only what a field list cannot say. The
# core is the judge of the result (unknown keys and wrong types are errors naming the path), and
# python/tests/test_specs.py checks these field sets against the core's canonical JSON, so a
# field the core gains and Python does not carry fails a test rather than being dropped.

# Tuples in metadata (overlays use them: a tuple replaces a list) cross as this marker object.
_TUPLE_KEY = "__torchx_tuple__"


def _encode_tuples(v: Any) -> Any:
    if isinstance(v, tuple):
        return {_TUPLE_KEY: [_encode_tuples(x) for x in v]}
    if isinstance(v, list):
        return [_encode_tuples(x) for x in v]
    if isinstance(v, dict):
        return {k: _encode_tuples(x) for k, x in v.items()}
    return v


def _decode_tuples(v: Any, path: str = "") -> Any:
    if isinstance(v, dict):
        if len(v) == 1 and isinstance(v.get(_TUPLE_KEY), list):
            return tuple(_decode_tuples(x) for x in v[_TUPLE_KEY])
        return {k: _decode_tuples(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_decode_tuples(x) for x in v]
    return v


# Fields that do not cross, and why: base_image is deprecated in TorchX and read by nothing;
# overrides holds Python producers (callables, awaitables) that Role resolves into the fields
# themselves on access (see Role.__getattribute__), so the core sees their values instead.
# workspace is applied by the Python Runner (it names local paths; the core's dry run takes the
# runner's workspace argument instead).
_PYTHON_ONLY: Dict[type, Tuple[str, ...]] = {Role: ("base_image", "overrides", "workspace")}
_MODEL_CLASSES: Tuple[type, ...] = (AppDef, Role, Resource, BindMount, VolumeMount, DeviceMount)

# The "type" tag of each mount class in the core's JSON (TorchX's MountType values).
_MOUNT_TYPES: Dict[type, MountType] = {BindMount: MountType.BIND, VolumeMount: MountType.VOLUME,
                                       DeviceMount: MountType.DEVICE}


@functools.lru_cache(maxsize=None)
def _model_class(tp: type) -> type:
    """The model record a type is or derives from; a user subclass (a Role overriding
    ``pre_proc``) crosses with its base's fields, the only ones the core knows."""
    for cls in tp.__mro__:
        if cls in _MODEL_CLASSES:
            return cls
    raise TypeError(f"expected one of {', '.join(c.__name__ for c in _MODEL_CLASSES)}, got {tp.__name__}")


def carried_fields(cls: type) -> List[str]:
    """The fields of a model record that cross into the core, in declaration order."""
    return [name for name, _ in _plan(cls)]


@functools.lru_cache(maxsize=None)
def _plan(cls: type) -> Tuple[Tuple[str, Optional[Tuple[Any, Any]]], ...]:
    # Per class, once (the records are fixed at import): each carried field and its conversion.
    skip = _PYTHON_ONLY.get(cls, ())
    return tuple((f.name, _CONVERSIONS.get((cls, f.name))) for f in fields_of(cls) if f.name not in skip)


def _plain(v: Any) -> Any:
    # Containers are copied so the JSON form never aliases the caller's objects.
    if isinstance(v, Enum):
        return v.value
    if isinstance(v, (list, tuple)):
        return list(v)
    if isinstance(v, dict):
        return dict(v)
    return v


def _obj_to_json(obj: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for name, conv in _plan(_model_class(type(obj))):  # type: ignore[arg-type]  # a class is hashable
        value = getattr(obj, name)  # through Role.__getattribute__: overrides are resolved here
        out[name] = conv[0](value) if conv else _plain(value)
    return out


def _obj_from_json(cls: type, j: Mapping[str, Any], path: str) -> Any:
    if not isinstance(j, Mapping):
        raise TypeError(f"{path}: expected an object, got {type(j).__name__}")
    plan = dict(_plan(cls))
    unknown = sorted(k for k in j if k not in plan)
    if unknown:
        raise ValueError(
            f"{path}: field(s) {', '.join(unknown)} of the core's JSON are not carried by torchx.specs."
            f"{cls.__name__} (it carries {', '.join(plan)}): add them to the record"
        )
    kwargs = {}
    for name, value in j.items():
        conv = plan[name]
        kwargs[name] = conv[1](value, f"{path}.{name}") if conv else _plain(value)
    return cls(**kwargs)


def _mount_to_json(m: Union[BindMount, VolumeMount, DeviceMount]) -> Dict[str, Any]:
    cls = next((c for c in type(m).__mro__ if c in _MOUNT_TYPES), None)
    if cls is None:
        raise TypeError(f"mounts: expected BindMount, VolumeMount or DeviceMount, got {type(m).__name__}")
    out = _obj_to_json(m)
    out["type"] = _MOUNT_TYPES[cls].value
    return out


def _mount_from_json(j: Dict[str, Any], path: str = "mount") -> Union[BindMount, VolumeMount, DeviceMount]:
    j = dict(j)
    kind = j.pop("type", None)
    by_tag = {t.value: cls for cls, t in _MOUNT_TYPES.items()}
    if kind not in by_tag:
        raise ValueError(f"{path}.type: {kind!r} is not one of {', '.join(by_tag)}")
    return _obj_from_json(by_tag[kind], j, path)


def _list_of(to: Any, from_: Any) -> Tuple[Any, Any]:
    return (lambda vs: [to(v) for v in vs],
            lambda js, path: [from_(j, f"{path}[{i}]") for i, j in enumerate(js or [])])


def _retry_policy_from_json(v: Any, path: str) -> RetryPolicy:
    try:
        return RetryPolicy(v)
    except ValueError:
        raise ValueError(f"{path}: {v!r} is not one of {', '.join(p.value for p in RetryPolicy)}") from None


# Fields whose value is not its own JSON form: (to JSON, from JSON) per (class, field).
_CONVERSIONS: Dict[Tuple[type, str], Tuple[Any, Any]] = {
    (AppDef, "roles"): _list_of(_obj_to_json, lambda j, path: _obj_from_json(Role, j, path)),
    (Role, "retry_policy"): (_plain, _retry_policy_from_json),
    (Role, "resource"): (_obj_to_json, lambda j, path: _obj_from_json(Resource, j, path)),
    (Role, "mounts"): _list_of(_mount_to_json, _mount_from_json),
    (Role, "metadata"): (_encode_tuples, _decode_tuples),
}


def resource_to_json(r: Resource) -> Dict[str, Any]:
    if not isinstance(r, Resource):  # a named resource factory's result, unchecked until here
        raise TypeError(f"expected a Resource, got {type(r).__name__}")
    return _obj_to_json(r)


def resource_from_json(j: Dict[str, Any]) -> Resource:
    return _obj_from_json(Resource, j, "resource")


def to_json(app: AppDef) -> Dict[str, Any]:
    """The AppDef as the core's JSON object (types are checked by the core when it reads it)."""
    if not isinstance(app, AppDef):
        raise TypeError(f"expected an AppDef, got {type(app).__name__}")
    return _obj_to_json(app)


def from_json(j: Dict[str, Any]) -> AppDef:
    """The core's AppDef JSON as an AppDef; missing fields take the records' defaults."""
    return _obj_from_json(AppDef, j, "AppDef")


def app_to_core(app: AppDef, resolve_overrides: bool = True) -> str:
    """AppDef -> the JSON text the extension reads; TypeError for objects that are not an AppDef.
    ``resolve_overrides=False``: each role's own fields, its ``overrides`` left unresolved (for a
    Python scheduler object, which TorchX leaves them to)."""
    if not isinstance(app, AppDef):
        raise TypeError(f"expected an AppDef, got {type(app).__name__}")
    # An encoder, not json.dumps: tests patch json.dumps, and the AppDef must cross intact anyway.
    from json import JSONEncoder

    encoder = JSONEncoder(default=_json_default)
    if resolve_overrides:
        return encoder.encode(to_json(app))
    with _overrides_detached(app):
        return encoder.encode(to_json(app))


@contextlib.contextmanager
def _overrides_detached(app: AppDef) -> Iterator[List[Dict[str, Any]]]:
    """Each role's overrides dict set aside (and put back): reads see the roles' own fields."""
    detached = [role.overrides for role in app.roles]
    for role in app.roles:
        role.overrides = {}
    try:
        yield detached
    finally:
        for role, overrides in zip(app.roles, detached):
            role.overrides = overrides


def _copy_app(app: AppDef) -> AppDef:
    """A deep copy of ``app`` whose roles share the caller's ``overrides`` dicts (they may hold
    values deepcopy cannot copy, such as futures; resolving one through either side serves both)."""
    import copy

    with _overrides_detached(app) as detached:
        out = copy.deepcopy(app)
    for role, overrides in zip(out.roles, detached):
        role.overrides = overrides
    return out


def _fields_dict(obj: Any) -> Dict[str, Any]:
    """A flat record's fields as a dict (``dataclasses.asdict`` for fields that hold no records)."""
    return {f.name: getattr(obj, f.name) for f in fields_of(type(obj))}


def _json_default(o: Any) -> Any:
    if isinstance(o, Enum):
        return o.value
    raise TypeError(f"AppDef: {type(o).__name__} values cannot be serialized ({o!r})")


def status_from_core(text: Optional[str]) -> Optional[AppStatus]:
    if text is None:
        return None
    import json

    j = json.loads(text)
    roles = [
        RoleStatus(
            role=r["role"],
            replicas=[
                ReplicaStatus(
                    id=rep["id"],
                    state=AppState(rep["state"]),
                    role=rep["role"],
                    hostname=rep["hostname"],
                    structured_error_msg=rep.get("structured_error_msg", NONE),
                )
                for rep in r["replicas"]
            ],
        )
        for r in j.get("roles", [])
    ]
    return AppStatus(
        state=AppState[j["state"]],
        num_restarts=j.get("num_restarts", 0),
        msg=j.get("msg", ""),
        structured_error_msg=j.get("structured_error_msg", NONE),
        ui_url=j.get("url"),
        roles=roles,
    )
