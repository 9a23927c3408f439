"""The job model: AppDef, Role, Resource, mounts, AppState/AppStatus, macros, runopts, handles.

These are plain dataclasses with TorchX's names, fields and defaults, so that component files
written for TorchX build them unchanged. Everything with rules behind it (validation, macro
substitution, handle parsing, status formatting, cfg resolution) is done by the C++ core; the
objects cross into it as the canonical AppDef JSON (``to_json`` / ``from_json`` below).
"""

import copy
import json
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any, Dict, Generic, Iterator, List, Mapping, NamedTuple, Optional, Tuple, Type, TypeVar, Union

from torchx._core import core
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
    "parse_app_handle", "runopt", "runopts",
]

ALL: str = "all"
MISSING: str = "<MISSING>"
NONE: str = "<NONE>"

AppHandle = str
CfgVal = Union[str, int, float, bool, List[str], Dict[str, str], None]


@dataclass
class Resource:
    """Resources one replica asks for. ``capabilities`` are scheduler-specific (e.g. instance
    type); ``devices`` maps a device name (``vpc.amazonaws.com/efa``) to a count."""

    cpu: int
    gpu: int
    memMB: int
    capabilities: Dict[str, Any] = field(default_factory=dict)
    devices: Dict[str, int] = field(default_factory=dict)
    tags: Dict[str, object] = field(default_factory=dict)

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
    return copy.deepcopy(NULL_RESOURCE)


class macros:
    """Placeholders in ``Role.args``, ``Role.env`` values and ``Role.metadata`` that the
    scheduler fills in when it launches each replica."""

    img_root = "${img_root}"
    base_img_root = "${base_img_root}"
    app_id = "${app_id}"
    replica_id = "${replica_id}"
    rank0_env = "${rank0_env}"

    @dataclass
    class Values:
        img_root: str
        app_id: str
        replica_id: str
        rank0_env: str
        base_img_root: str = "DEPRECATED"

        def apply(self, role: "Role") -> "Role":
            """A copy of ``role`` with the macros substituted (args, env values, metadata)."""
            app = AppDef(name="macros", roles=[role])
            out = from_json(
                json.loads(
                    core().macros_apply(
                        json.dumps(to_json(app)), self.img_root, self.app_id, self.replica_id, self.rank0_env
                    )
                )
            ).roles[0]
            out.overrides = dict(role.overrides)
            return out

        def to_dict(self) -> Dict[str, Any]:
            return asdict(self)

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


@dataclass
class BindMount:
    src_path: str
    dst_path: str
    read_only: bool = False


@dataclass
class VolumeMount:
    src: str
    dst_path: str
    read_only: bool = False


@dataclass
class DeviceMount:
    src_path: str
    dst_path: str
    permissions: str = "rwm"


@dataclass
class Role:
    """A set of identical replicas: what runs (image, entrypoint, args, env), how many, with
    what resources and retry behaviour. Defaults as TorchX's."""

    name: str
    image: str
    min_replicas: Optional[int] = None
    base_image: Optional[str] = None  # deprecated in TorchX; never used
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
    overrides: Dict[str, Any] = field(default_factory=dict)

    def pre_proc(self, scheduler: str, dryrun_info: "AppDryRunInfo") -> "AppDryRunInfo":
        """Hook TorchX calls before submitting; the identity here, kept for subclasses."""
        return dryrun_info


@dataclass
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


@dataclass
class ReplicaStatus:
    id: int
    state: ReplicaState
    role: str
    hostname: str
    structured_error_msg: str = NONE


@dataclass
class RoleStatus:
    role: str
    replicas: List[ReplicaStatus]

    def to_json(self) -> Dict[str, Any]:
        return {"role": self.role, "replicas": [asdict(r) for r in self.replicas]}


@dataclass
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
        return json.dumps(self.to_json(), indent=2)

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
        return core().format_app_status(json.dumps(self.to_json()), list(filter_roles or []))


T = TypeVar("T")


class AppDryRunInfo(Generic[T]):
    """What a dry run produced: the request the scheduler would submit (printable), and the app
    and cfg it was made from."""

    def __init__(self, request: T, fmt: Any = str) -> None:
        self.request = request
        self._fmt = fmt
        self._app: Optional[AppDef] = None
        self._cfg: Mapping[str, CfgVal] = {}
        self._scheduler: Optional[str] = None
        self._core: Any = None  # the core's DryRunInfo, submitted by Runner.schedule

    def __repr__(self) -> str:
        return self._fmt(self.request)


def get_type_name(tp: Type[CfgVal]) -> str:
    """``str``, ``int``, ... or ``List[str]`` / ``Dict[str, str]`` for the container types."""
    if tp in (List[str], list):
        return "List[str]"
    if tp in (Dict[str, str], dict):
        return "Dict[str, str]"
    return getattr(tp, "__name__", str(tp))


_CFG_TYPES: Dict[str, Any] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "typing.List[str]": List[str],
    "typing.Dict[str, str]": Dict[str, str],
}
_CFG_TYPE_NAMES = {v: k for k, v in _CFG_TYPES.items()}
_CFG_TYPE_NAMES.update({list: "typing.List[str]", dict: "typing.Dict[str, str]"})


@dataclass
class runopt:
    default: CfgVal
    opt_type: Type[CfgVal]
    is_required: bool
    help: str


class runopts:
    """A scheduler's run options: name -> type, default, required, help."""

    def __init__(self) -> None:
        self._opts: Dict[str, runopt] = {}

    def __iter__(self) -> Iterator[Tuple[str, runopt]]:
        return iter(self._opts.items())

    def __len__(self) -> int:
        return len(self._opts)

    def get(self, name: str) -> Optional[runopt]:
        return self._opts.get(name)

    def add(self, cfg_key: str, type_: Type[CfgVal], help: str, default: CfgVal = None, required: bool = False) -> None:
        if type_ not in _CFG_TYPE_NAMES:
            raise TypeError(
                f"runopts: option {cfg_key}: type must be one of str, int, float, bool, List[str], Dict[str, str]"
            )
        previous = self._opts.get(cfg_key)
        self._opts[cfg_key] = runopt(default, type_, required, help)
        try:
            core().runopts_render(self._to_json())  # the core checks required-with-default and types
        except Exception:
            if previous is None:
                del self._opts[cfg_key]
            else:
                self._opts[cfg_key] = previous
            raise

    def update(self, other: "runopts") -> None:
        self._opts.update(other._opts)

    def resolve(self, cfg: Mapping[str, CfgVal]) -> Dict[str, CfgVal]:
        """Fills defaults, checks required options and types (InvalidRunConfigException)."""
        return core().runopts_resolve(self._to_json(), dict(cfg))

    def cfg_from_str(self, cfg_str: str) -> Dict[str, CfgVal]:
        """Parses ``k1=v1,k2=v2;k3=a,b`` (the ``-cfg`` syntax), casting known options."""
        return core().runopts_cfg_from_str(self._to_json(), cfg_str)

    def cfg_from_json_repr(self, json_repr: str) -> Dict[str, CfgVal]:
        cfg = json.loads(json_repr)
        return {k: v for k, v in cfg.items() if k in self._opts}

    def __repr__(self) -> str:
        return core().runopts_render(self._to_json())

    def _to_json(self) -> str:
        return json.dumps(
            [
                {
                    "name": name,
                    "type": _CFG_TYPE_NAMES[o.opt_type],
                    "help": o.help,
                    "default": o.default,
                    "required": o.is_required,
                }
                for name, o in self._opts.items()
            ]
        )

    @staticmethod
    def _from_json(text: str) -> "runopts":
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
    return core().make_app_handle(scheduler_backend, session_name, app_id)


# ---- canonical JSON form (the core's AppDef JSON) ----


def _mount_to_json(m: Union[BindMount, VolumeMount, DeviceMount]) -> Dict[str, Any]:
    if isinstance(m, BindMount):
        return {"type": "bind", "src_path": m.src_path, "dst_path": m.dst_path, "read_only": m.read_only}
    if isinstance(m, VolumeMount):
        return {"type": "volume", "src": m.src, "dst_path": m.dst_path, "read_only": m.read_only}
    if isinstance(m, DeviceMount):
        return {"type": "device", "src_path": m.src_path, "dst_path": m.dst_path, "permissions": m.permissions}
    raise TypeError(f"mounts: expected BindMount, VolumeMount or DeviceMount, got {type(m).__name__}")


def _mount_from_json(j: Dict[str, Any]) -> Union[BindMount, VolumeMount, DeviceMount]:
    kind = j.pop("type")
    return {"bind": BindMount, "volume": VolumeMount, "device": DeviceMount}[kind](**j)


def resource_to_json(r: Resource) -> Dict[str, Any]:
    return {
        "cpu": r.cpu,
        "gpu": r.gpu,
        "memMB": r.memMB,
        "capabilities": r.capabilities,
        "devices": r.devices,
        "tags": r.tags,
    }


def resource_from_json(j: Dict[str, Any]) -> Resource:
    return Resource(**j)


def _str_enum_value(v: Any) -> Any:
    return v.value if isinstance(v, Enum) else v


def to_json(app: AppDef) -> Dict[str, Any]:
    """The AppDef as the core's JSON object (types are checked by the core when it reads it)."""
    roles = []
    for r in app.roles:
        roles.append(
            {
                "name": r.name,
                "image": r.image,
                "entrypoint": r.entrypoint,
                "args": list(r.args),
                "env": dict(r.env),
                "num_replicas": r.num_replicas,
                "min_replicas": r.min_replicas,
                "max_retries": r.max_retries,
                "retry_policy": _str_enum_value(r.retry_policy),
                "resource": resource_to_json(r.resource),
                "port_map": dict(r.port_map),
                "metadata": dict(r.metadata),
                "mounts": [_mount_to_json(m) for m in r.mounts],
            }
        )
    return {"name": app.name, "roles": roles, "metadata": dict(app.metadata)}


def from_json(j: Dict[str, Any]) -> AppDef:
    roles = []
    for r in j.get("roles", []):
        r = dict(r)
        r["retry_policy"] = RetryPolicy(r.get("retry_policy", "APPLICATION"))
        r["resource"] = resource_from_json(r["resource"]) if "resource" in r else _null_resource()
        r["mounts"] = [_mount_from_json(dict(m)) for m in r.get("mounts", [])]
        roles.append(Role(**r))
    return AppDef(name=j["name"], roles=roles, metadata=dict(j.get("metadata", {})))


def app_to_core(app: AppDef) -> str:
    """AppDef -> the JSON text the extension reads; TypeError for objects that are not an AppDef."""
    if not isinstance(app, AppDef):
        raise TypeError(f"expected an AppDef, got {type(app).__name__}")
    return json.dumps(to_json(app), default=_json_default)


def _json_default(o: Any) -> Any:
    if isinstance(o, Enum):
        return o.value
    raise TypeError(f"AppDef: {type(o).__name__} values cannot be serialized ({o!r})")


def status_from_core(text: Optional[str]) -> Optional[AppStatus]:
    if text is None:
        return None
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
