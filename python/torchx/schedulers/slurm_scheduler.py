"""torchx.schedulers.slurm_scheduler: TorchX's ``SlurmScheduler`` class over the core's slurm
back-end, for plugins that wrap or subclass it.

``submit_dryrun`` returns a ``SlurmBatchRequest``: the sbatch command line (``cmd``) and, per
replica (``<role>-<i>``), its ``#SBATCH`` options, srun options and command, as the core builds
them (see docs/slurm.md). A caller or a subclass's ``_submit_dryrun`` may edit them; ``schedule``
submits the edited request through the core (``materialize()`` shows the script it writes). The
other calls (describe, list, logs, cancel) are the core's, by job id.
"""

import json
import logging
import subprocess
import warnings
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Dict, List, Mapping, Optional, Tuple

from torchx._core import backend_helper, core
from torchx.schedulers._core_backend import CoreBackend
from torchx.schedulers.api import Scheduler
from torchx.schedulers.structured_opts import StructuredOpts
from torchx.specs.api import AppDef, AppDryRunInfo, AppState, CfgVal, runopts

log: logging.Logger = logging.getLogger(__name__)

SLURM_JOB_DIRS = ".torchxslurmjobdirs"

def appstate_from_slurm_state(slurm_state: str) -> AppState:
    """The AppState of a Slurm job state (``RUNNING``, ``CANCELLED by 123``, ...); UNKNOWN for
    names Slurm does not define."""
    return AppState(backend_helper("slurm", "app_state", slurm_state))


def __getattr__(name: str) -> Any:
    if name == "SLURM_STATES":  # Slurm's job state names -> AppState: the core's table
        return {state: AppState(v) for state, v in backend_helper("slurm", "states").items()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def version() -> Tuple[int, int]:
    """(major, minor) of the Slurm the tools here talk to (``sinfo --version``); (24, 5) with a
    RuntimeWarning when it cannot be read, as the core assumes then."""
    try:
        out = subprocess.check_output(["sinfo", "--version"], stderr=subprocess.PIPE, encoding="utf-8")
        major, minor = out.split()[1].split(".")[:2]
        return int(major), int(minor)
    except (OSError, subprocess.CalledProcessError, IndexError, ValueError) as e:
        warnings.warn(f"cannot read the Slurm version from `sinfo --version` ({e}); assuming 24.05", RuntimeWarning)
        return 24, 5


@dataclass
class SlurmOpts(StructuredOpts):
    """Run options of the slurm scheduler as a typed dataclass (the same options as
    ``torchx runopts slurm``, which the core declares)."""

    account: Optional[str] = None
    """The account to charge the job to (sbatch --account)."""
    partition: Optional[str] = None
    """The partition to run the job in."""
    time: Optional[str] = None
    """The maximum time the job may run (Slurm's time formats)."""
    comment: Optional[str] = None
    """Comment to set on the slurm job."""
    constraint: Optional[str] = None
    """Constraint to use for the slurm job."""
    mail_user: Optional[str] = field(default=None, metadata={"cfg_key": "mail-user"})
    """User to mail on job end."""
    mail_type: Optional[str] = field(default=None, metadata={"cfg_key": "mail-type"})
    """What events to mail users on."""
    job_dir: Optional[str] = None
    """The directory to place the job code and outputs in (must not exist)."""
    qos: Optional[str] = None
    """Quality of Service (QoS) to assign to the job."""
    nomem: bool = False
    """Do not request memory (--mem) for the replicas."""
    requeue: bool = True
    """Let Slurm requeue the job after a node failure or preemption (--requeue); False:
    --no-requeue, as a managed job submits it (roles then need max_retries=0)."""
    workspace_type: str = "dir"
    """Which workspace builder patches the image: dir, or docker (every replica runs inside its
    role's image through the cluster's container plugin, srun --container-image)."""
    image_repo: Optional[str] = None
    """(workspace_type=docker) The repository a --workspace image is pushed to and the nodes'
    container plugin pulls from."""
    quiet: bool = False
    """(workspace_type=docker) Whether to suppress verbose output for image building."""
    status_interval: float = 2.0
    """Seconds an answer about the queue is reused: every reader of job states on this host shares
    one squeue of all the user's jobs per interval (read from .torchxconfig's [slurm] section)."""
    dependency: Optional[str] = None
    """Start the job only once these jobs have ended as said (sbatch --dependency, e.g.
    afterok:123:124); the job is cancelled when its dependency can no longer be met."""


class SlurmFlags(List[str]):
    """A list of ``--flag[=value]`` words that also reads and writes like TorchX's options dict:
    ``"mem" in opts``, ``opts["qos"]`` (the value, None for a bare flag), ``opts["qos"] = "high"``
    (replaces the flag or appends it), ``del opts["mem"]``."""

    def _index(self, key: str) -> int:
        for i, word in enumerate(self):
            if word == f"--{key}" or word.startswith(f"--{key}="):
                return i
        return -1

    def __contains__(self, item: object) -> bool:
        if isinstance(item, str) and not item.startswith("-"):
            return self._index(item) >= 0
        return super().__contains__(item)

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        if isinstance(key, str):
            i = self._index(key)
            if i < 0:
                raise KeyError(key)
            _, sep, value = super().__getitem__(i).partition("=")
            return value if sep else None
        return super().__getitem__(key)

    def __setitem__(self, key: Any, value: Any) -> None:  # type: ignore[override]
        if isinstance(key, str):
            word = f"--{key}" if value is None else f"--{key}={value}"
            i = self._index(key)
            if i < 0:
                self.append(word)
            else:
                super().__setitem__(i, word)
            return
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:  # type: ignore[override]
        if isinstance(key, str):
            i = self._index(key)
            if i < 0:
                raise KeyError(key)
            key = i
        super().__delitem__(key)


@dataclass
class SlurmReplicaRequest:
    """One heterogeneous-job group (one replica): its ``#SBATCH`` options, the options of its
    ``srun`` group and its command (shell words, already quoted)."""

    name: str
    sbatch_opts: List[str] = field(default_factory=SlurmFlags)
    srun_opts: List[str] = field(default_factory=SlurmFlags)
    command: List[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sbatch_opts = SlurmFlags(self.sbatch_opts)
        self.srun_opts = SlurmFlags(self.srun_opts)


@dataclass
class SlurmBatchRequest:
    """What ``sbatch`` is run with: ``cmd`` (``sbatch --parsable`` and job-level options) and
    the batch script made from ``replicas``."""

    cmd: List[str]
    replicas: Dict[str, SlurmReplicaRequest]
    max_retries: int = 0
    job_dir: Optional[str] = None
    #: the ``--workspace`` directory copied into ``job_dir`` (``workspace_type=dir``)
    workspace: Optional[str] = None
    #: what ``schedule`` pushes before ``sbatch`` (``workspace_type=docker``): each workspace image
    #: as ``{"repo:tag": (repo, tag)}``, as torchx-nightly names it
    images_to_push: Optional[Dict[str, Tuple[str, str]]] = None

    def to_json(self) -> str:
        return json.dumps(
            {
                "cmd": list(self.cmd),
                "replicas": [
                    {"name": r.name, "sbatch_opts": list(r.sbatch_opts), "srun_opts": list(r.srun_opts),
                     "command": list(r.command)}
                    for r in self.replicas.values()
                ],
                "max_retries": self.max_retries,
                "job_dir": self.job_dir or "",
                "workspace": self.workspace or "",
                "push": [f"{repo}:{tag}" for repo, tag in (self.images_to_push or {}).values()],
            }
        )

    @staticmethod
    def from_json(text: str) -> "SlurmBatchRequest":
        j = json.loads(text)
        return SlurmBatchRequest(
            cmd=list(j["cmd"]),
            replicas={r["name"]: SlurmReplicaRequest(**r) for r in j["replicas"]},
            max_retries=j.get("max_retries", 0),
            job_dir=j.get("job_dir") or None,
            workspace=j.get("workspace") or None,
            images_to_push={image: (image.rpartition(":")[0], image.rpartition(":")[2])
                            for image in j.get("push", [])} or None,
        )

    def materialize(self) -> str:
        """The batch script ``schedule`` writes (ValueError naming a malformed field)."""
        return backend_helper("slurm", "materialize", json.loads(self.to_json()))

    def __str__(self) -> str:
        return f"{' '.join(self.cmd)} <script>\n\n{self.materialize()}"


class SlurmScheduler(CoreBackend, Scheduler[Mapping[str, CfgVal]]):
    """Runs apps on Slurm as heterogeneous jobs (the core's ``slurm`` back-end)."""

    def __init__(self, session_name: str) -> None:
        super().__init__("slurm", session_name)

    def _run_opts(self) -> runopts:
        return runopts._from_json(core().scheduler_runopts(self.backend))

    def _validate(self, app: AppDef, scheduler: str, cfg: Optional[Mapping[str, CfgVal]] = None) -> None:
        """TorchX's slurm scheduler checks nothing here; the core refuses what Slurm cannot run."""

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo:
        request = SlurmBatchRequest.from_json(self._dryrun_payload(app, cfg))
        return AppDryRunInfo(request, str)

    def schedule(self, dryrun_info: AppDryRunInfo) -> str:
        request: SlurmBatchRequest = dryrun_info.request
        return self._schedule_core(dryrun_info, request.to_json())

def create_scheduler(session_name: str, **kwargs: Any) -> SlurmScheduler:
    return SlurmScheduler(session_name=session_name)


def _save_job_dir(job_id: str, job_dir: str) -> None:
    """Records where job ``job_id`` runs (``.torchxslurmjobdirs`` in the current directory, the
    file the core's slurm back-end writes and reads its logs through)."""
    with open(SLURM_JOB_DIRS, "a") as f:
        f.write(f"{job_id} = {job_dir}\n")


def _get_job_dirs() -> Dict[str, str]:
    """job id -> job_dir, from ``.torchxslurmjobdirs`` ({} without one)."""
    try:
        with open(SLURM_JOB_DIRS) as f:
            lines = f.readlines()
    except FileNotFoundError:
        return {}
    out: Dict[str, str] = {}
    for line in lines:
        job_id, sep, job_dir = line.partition(" = ")
        if sep:
            out[job_id.strip()] = job_dir.strip()
    return out
