"""torchx.schedulers.docker_scheduler: TorchX's ``DockerScheduler`` class (``local_docker``) over
the core's local_docker back-end, for plugins that wrap or subclass it.

``submit_dryrun`` returns a ``DockerJob``: per replica a ``DockerContainer`` whose ``kwargs`` are
docker-py's ``containers.run`` arguments (``environment``, ``mounts`` as ``docker.types.Mount``,
``device_requests``, ``mem_limit``, ...), read from the container the core would create. A caller
or a subclass may edit them; ``schedule`` turns them back into the Engine API's container configs
and the core creates and starts them. describe, list, logs, cancel and delete are the core's.

Deliberate differences (docs/compatibility.md): replicas share the host network (``network:
host``, with rank 0's name in ``extra_hosts``) rather than a ``torchx`` bridge network, and the
core talks to the engine's socket itself (docker-py is needed only for the request's types).
"""

import json
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Union

import yaml

from torchx._core import backend_helper, core
from torchx.schedulers._core_backend import CoreBackend
from torchx.schedulers.api import Scheduler
from torchx.schedulers.structured_opts import StructuredOpts
from torchx.specs.api import AppDef, AppDryRunInfo, AppState, CfgVal, runopts

LABEL_VERSION: str = "torchx.pytorch.org/version"
LABEL_APP_ID: str = "torchx.pytorch.org/app-id"
LABEL_ROLE_NAME: str = "torchx.pytorch.org/role-name"
LABEL_REPLICA_ID: str = "torchx.pytorch.org/replica-id"

NETWORK = "host"

_MIB = 1024 * 1024


def has_docker() -> bool:
    """Whether docker-py is installed and a Docker engine answers (DOCKER_HOST or the default socket)."""
    try:
        import docker
    except ImportError:
        return False
    try:
        docker.from_env()
        return True
    except docker.errors.DockerException:
        return False


@dataclass
class DockerContainer:
    image: str
    command: List[str]
    kwargs: Dict[str, object]


@dataclass
class DockerJob:
    app_id: str
    containers: List[DockerContainer]

    def __str__(self) -> str:
        return yaml.dump(self.containers)

    def __repr__(self) -> str:
        return str(self)


@dataclass
class Opts(StructuredOpts):
    """Run options of local_docker as a typed dataclass (``torchx runopts local_docker``)."""

    copy_env: Optional[List[str]] = None
    """Glob patterns of environment variables to copy if not set in the AppDef. Ex: FOO_*"""
    env: Optional[Dict[str, str]] = None
    """Environment variables for every replica, applied on top of copy_env's."""
    privileged: bool = False
    """Whether the containers run with elevated permissions (docker run --privileged)."""
    image_repo: Optional[str] = None
    """(remote jobs) the image repository to use when pushing patched images."""
    quiet: bool = False
    """Whether to suppress verbose output for image building."""


DockerOpts = Opts


def _size(n_bytes: int) -> object:
    # docker-py's size strings, as TorchX writes them ("3000m"), where the size is whole MiB.
    return f"{n_bytes // _MIB}m" if n_bytes % _MIB == 0 else n_bytes


def _bytes(value: object, key: str) -> int:
    if isinstance(value, int):
        return value
    m = re.fullmatch(r"(\d+)([bkmg]?)", str(value).strip().lower())
    if not m:
        raise ValueError(f"DockerContainer.kwargs[{key!r}] = {value!r} is not a size (bytes, or a number with b/k/m/g)")
    return int(m.group(1)) * {"": 1, "b": 1, "k": 1024, "m": _MIB, "g": 1024 * _MIB}[m.group(2)]


def _container_from_config(name: str, config: Mapping[str, Any]) -> DockerContainer:
    from docker.types import DeviceRequest, Mount

    host = config.get("HostConfig", {})
    kwargs: Dict[str, object] = {
        "environment": dict(e.split("=", 1) for e in config.get("Env", [])),
        "labels": dict(config.get("Labels", {})),
        "name": name,
        "hostname": config.get("Hostname", name),
        "privileged": bool(host.get("Privileged", False)),
        "network": host.get("NetworkMode", NETWORK),
        "mounts": [
            Mount(target=m["Target"], source=m["Source"], type=m["Type"], read_only=m.get("ReadOnly", False))
            for m in host.get("Mounts", [])
        ],
    }
    if "Memory" in host:
        kwargs["mem_limit"] = _size(host["Memory"])
    if "ShmSize" in host:
        kwargs["shm_size"] = _size(host["ShmSize"])
    if "NanoCpus" in host:
        kwargs["nano_cpus"] = host["NanoCpus"]
    if "DeviceRequests" in host:
        kwargs["device_requests"] = [
            DeviceRequest(count=d.get("Count"), capabilities=d.get("Capabilities")) for d in host["DeviceRequests"]
        ]
    if "Devices" in host:
        kwargs["devices"] = [
            f"{d['PathOnHost']}:{d['PathInContainer']}:{d['CgroupPermissions']}" for d in host["Devices"]
        ]
    if "RestartPolicy" in host:
        kwargs["restart_policy"] = dict(host["RestartPolicy"])
    if "ExtraHosts" in host:
        kwargs["extra_hosts"] = dict(h.rsplit(":", 1) for h in host["ExtraHosts"])
    return DockerContainer(image=config["Image"], command=list(config.get("Cmd", [])), kwargs=kwargs)


def _device(spec: object) -> Dict[str, str]:
    # docker-py's "host[:container[:permissions]]".
    parts = spec.split(":") if isinstance(spec, str) else []
    if not 1 <= len(parts) <= 3 or not parts[0] or (len(parts) == 3 and not set(parts[2]) <= set("rwm")):
        raise ValueError(
            f"DockerContainer.kwargs['devices']: {spec!r} is not host_path[:container_path[:permissions of r, w, m]]"
        )
    src, dst, perm = (parts + ["", ""])[:3]
    return {"PathOnHost": src, "PathInContainer": dst or src, "CgroupPermissions": perm or "rwm"}


_KWARGS = (
    "environment labels name hostname privileged network mounts mem_limit shm_size nano_cpus device_requests "
    "devices restart_policy extra_hosts"
).split()


def _config_from_container(c: DockerContainer) -> Dict[str, Any]:
    """The Engine API's create body for a container as docker-py's kwargs describe it."""
    unknown = sorted(set(c.kwargs) - set(_KWARGS))
    if unknown:
        raise ValueError(f"DockerContainer.kwargs has {unknown}, which local_docker does not send; valid keys: {_KWARGS}")
    k: Dict[str, Any] = c.kwargs
    host: Dict[str, Any] = {"NetworkMode": k.get("network", NETWORK), "Privileged": bool(k.get("privileged", False))}
    if "mem_limit" in k:
        host["Memory"] = _bytes(k["mem_limit"], "mem_limit")
    if "shm_size" in k:
        host["ShmSize"] = _bytes(k["shm_size"], "shm_size")
    if "nano_cpus" in k:
        host["NanoCpus"] = int(k["nano_cpus"])
    if k.get("device_requests"):
        host["DeviceRequests"] = [dict(d) for d in k["device_requests"]]
    if k.get("devices"):
        host["Devices"] = [_device(d) for d in k["devices"]]
    if k.get("mounts"):
        host["Mounts"] = [dict(m) for m in k["mounts"]]
    if k.get("restart_policy"):
        host["RestartPolicy"] = dict(k["restart_policy"])
    if k.get("extra_hosts"):
        extra = k["extra_hosts"]
        host["ExtraHosts"] = [f"{h}:{ip}" for h, ip in extra.items()] if isinstance(extra, dict) else list(extra)
    env = k.get("environment") or {}
    return {
        "Image": c.image,
        "Cmd": list(c.command),
        "Env": [f"{key}={value}" for key, value in env.items()] if isinstance(env, dict) else list(env),
        "Labels": dict(k.get("labels") or {}),
        "Hostname": k.get("hostname", k.get("name")),
        "HostConfig": host,
    }


# Where TorchX 0.7.0 kept the docker-py client (DockerWorkspaceMixin's private attribute).
_CLIENT_ATTR = "_DockerWorkspaceMixin__docker_client"


class DockerScheduler(CoreBackend, Scheduler[Mapping[str, CfgVal]]):
    """Runs each replica as a container on the local Docker engine (the core's ``local_docker``)."""

    def __init__(self, session_name: str, docker_client: Any = None) -> None:
        super().__init__("local_docker", session_name)
        self.__dict__[_CLIENT_ATTR] = docker_client

    # TorchX 0.7.0's lazy client (its DockerWorkspaceMixin's): subclasses such as NeMo-Run's
    # PersistentDockerScheduler call docker-py through it, and their tests set it under 0.7.0's
    # attribute name. Made with docker.from_env() on first use.
    @property
    def _docker_client(self) -> Any:
        client = self.__dict__.get(_CLIENT_ATTR)
        if client is None:
            import docker

            client = self.__dict__[_CLIENT_ATTR] = docker.from_env()
        return client

    @_docker_client.setter
    def _docker_client(self, client: Any) -> None:
        self.__dict__[_CLIENT_ATTR] = client

    def _get_app_state(self, container: Any) -> AppState:
        """A docker-py container's AppState (TorchX 0.7.0's helper; the core's table)."""
        exit_code = int(((getattr(container, "attrs", None) or {}).get("State") or {}).get("ExitCode") or 0)
        state = backend_helper(self.backend, "container_state", {"status": str(container.status), "exit_code": exit_code})
        return AppState(state)

    def _run_opts(self) -> runopts:
        return runopts._from_json(core().scheduler_runopts(self.backend))

    def _validate(self, app: AppDef, scheduler: str, cfg: Optional[Mapping[str, CfgVal]] = None) -> None:
        """TorchX's docker scheduler checks nothing here; the core refuses what it cannot run."""

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo[DockerJob]:
        return AppDryRunInfo(self._request_from_native(json.loads(self._dryrun_payload(app, cfg))), repr)

    def _request_from_native(self, payload: Dict[str, Any]) -> DockerJob:
        return DockerJob(
            app_id=payload["app_id"],
            containers=[_container_from_config(c["name"], c["config"]) for c in payload["containers"]],
        )

    def schedule(self, dryrun_info: AppDryRunInfo[DockerJob]) -> str:
        job: DockerJob = dryrun_info.request
        payload = {
            "app_id": job.app_id,
            "containers": [
                {"name": c.kwargs.get("name") or f"{job.app_id}-{i}", "config": _config_from_container(c)}
                for i, c in enumerate(job.containers)
            ],
        }
        return self._schedule_core(dryrun_info, json.dumps(payload), job.app_id)
    def _delete_existing(self, app_id: str) -> None:
        self._delete_core(app_id)


def _to_str(a: Union[str, bytes]) -> str:
    """UTF-8 text of a docker API value (TorchX's private helper, kept for tools that import it:
    NeMo-Run's docker executor)."""
    return a.decode("utf-8") if isinstance(a, bytes) else a


def create_scheduler(session_name: str, docker_client: Any = None, **kwargs: Any) -> DockerScheduler:
    return DockerScheduler(session_name=session_name, docker_client=docker_client)
