"""torchx.schedulers.ray_scheduler: TorchX 0.7.0's ``RayScheduler`` (``ray``) over the core's ray
back-end, for code written against it.

``submit_dryrun`` returns a ``RayJob`` (0.7.0's request type: ``app_id``, ``working_dir``,
``cluster_config_file``, ``cluster_name``, ``dashboard_address``, ``requirements``, and ``actors``,
one ``RayActor`` per replica with its command, env and resources). ``schedule`` submits what the
core's dry run built: the job runs the core's gang driver (a placement group, one actor per
replica) through Ray's Job Submission API, and the client needs no ``ray`` package. describe, list,
logs, cancel and delete are the core's. Differences from 0.7.0 (docs/ray.md): app ids keep 0.7.0's
``<dashboard host:port>-<id>``; ``ray_client`` (a ``JobSubmissionClient``) is accepted but unused;
replicas get ``TORCHX_RANK0_HOST``, ``MASTER_ADDR`` and ``MASTER_PORT`` from the driver.
"""

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional

from torchx._core import core
from torchx.schedulers._core_backend import CoreBackend
from torchx.schedulers.api import Scheduler
from torchx.specs.api import AppDef, AppDryRunInfo, CfgVal, runopts


def has_ray() -> bool:
    """Always True: the core speaks Ray's REST API itself (0.7.0 needed the ``ray`` package)."""
    return True


@dataclass
class RayActor:
    """One replica as the driver runs it (0.7.0's type; ``command`` is the argv)."""

    name: str
    command: List[str]
    env: Dict[str, str] = field(default_factory=dict)
    num_cpus: float = 1
    num_gpus: float = 0
    min_replicas: Optional[int] = None


@dataclass
class RayJob:
    """The request a dry run builds (0.7.0's fields)."""

    app_id: str
    working_dir: str
    cluster_config_file: Optional[str] = None
    cluster_name: Optional[str] = None
    dashboard_address: Optional[str] = None
    requirements: Optional[str] = None
    actors: List[RayActor] = field(default_factory=list)
    _payload: Optional[Dict[str, Any]] = field(default=None, repr=False, compare=False)


class RayScheduler(CoreBackend, Scheduler[Mapping[str, CfgVal]]):
    """Runs each app as one Ray job on the cluster whose dashboard ``dashboard_address`` names."""

    def __init__(self, session_name: str, ray_client: Any = None) -> None:
        super().__init__("ray", session_name)
        self._ray_client = ray_client

    def _run_opts(self) -> runopts:
        return runopts._from_json(core().scheduler_runopts(self.backend))

    def _validate(self, app: AppDef, scheduler: str, cfg: Optional[Mapping[str, CfgVal]] = None) -> None:
        """The core refuses what Ray cannot run (mounts, an image that is not a directory)."""

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo[RayJob]:
        return AppDryRunInfo(self._request_from_native(json.loads(self._dryrun_payload(app, cfg))), repr)

    def _request_from_native(self, payload: Dict[str, Any]) -> RayJob:
        if "spec" not in payload:  # describe_native: the job as Ray holds it
            return payload  # type: ignore[return-value]
        spec = json.loads(payload["spec"])
        actors = [
            RayActor(
                name=role["name"],
                command=list(rep["argv"]),
                env=dict(rep["env"]),
                num_cpus=role["resource"].get("cpu", 0),
                num_gpus=role["resource"].get("gpu", 0),
            )
            for role in spec["roles"]
            for rep in role["replicas"]
        ]
        return RayJob(
            app_id=payload["submission_id"],
            working_dir=payload["working_dir"],
            cluster_config_file=payload.get("cluster_config_file") or None,
            cluster_name=payload.get("cluster_name") or None,
            dashboard_address=payload["address"] or None,
            requirements=None,
            actors=actors,
            _payload=payload,
        )

    def schedule(self, dryrun_info: AppDryRunInfo[RayJob]) -> str:
        job: RayJob = dryrun_info.request
        payload = dict(job._payload or {})
        if not payload:
            raise ValueError("RayJob: schedule takes the request a submit_dryrun of this scheduler built")
        payload["working_dir"] = job.working_dir
        if job.dashboard_address:
            payload["address"] = job.dashboard_address
        app_id = f"{payload['address']}-{payload['submission_id']}" if payload["address"] else ""
        return self._schedule_core(dryrun_info, json.dumps(payload), app_id)

    def wait_until_finish(self, app_id: str, timeout: int = 30) -> None:
        """Waits up to ``timeout`` seconds for the job to end (0.7.0's helper)."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            d = self.describe(app_id)
            if d is None or d.state.name in ("SUCCEEDED", "FAILED", "CANCELLED"):
                return
            time.sleep(1)

    def _delete_existing(self, app_id: str) -> None:
        self._delete_core(app_id)


def create_scheduler(session_name: str, ray_client: Any = None, **kwargs: Any) -> RayScheduler:
    return RayScheduler(session_name=session_name, ray_client=ray_client)
