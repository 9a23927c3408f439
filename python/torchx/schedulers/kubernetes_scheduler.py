"""torchx.schedulers.kubernetes_scheduler: TorchX's ``KubernetesScheduler`` class (Volcano) over
the core's kubernetes back-end, for plugins that wrap or subclass it.

``submit_dryrun`` returns a ``KubernetesJob`` whose ``resource`` is the Volcano Job the core builds
(see docs/kubernetes.md), with each task's ``template`` a ``kubernetes.client.V1Pod`` as in TorchX:
a caller or a subclass's ``_submit_dryrun`` may edit it, and ``schedule`` creates the edited Job
through the core (its kubeconfig handling and REST client). ``role_to_pod``, ``app_to_resource``
and ``pod_labels`` are the core's manifest builder. describe, list, logs, cancel and delete are the
core's, by ``<namespace>:<job>`` id, so these apps are the ones ``torchx status`` sees.

The ``kubernetes`` Python client is needed only for the ``V1Pod`` objects (as in TorchX: a dry
run without it raises ``ModuleNotFoundError``); the core talks to the API server itself.
"""

import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple, cast

import yaml

from torchx._core import backend_helper, core
from torchx.schedulers._core_backend import CoreBackend
from torchx.schedulers.api import Scheduler
from torchx.schedulers.ids import make_unique
from torchx.schedulers.structured_opts import StructuredOpts
from torchx.specs.api import AppDef, AppDryRunInfo, CfgVal, Role, app_to_core, runopts
from torchx.util.strings import normalize_str

if TYPE_CHECKING:
    from kubernetes.client.models import V1Pod

log: logging.Logger = logging.getLogger(__name__)

RESERVED_MILLICPU = 100
RESERVED_MEMMB = 1024

LABEL_VERSION = "torchx.pytorch.org/version"
LABEL_APP_NAME = "torchx.pytorch.org/app-name"
LABEL_ROLE_INDEX = "torchx.pytorch.org/role-index"
LABEL_ROLE_NAME = "torchx.pytorch.org/role-name"
LABEL_REPLICA_ID = "torchx.pytorch.org/replica-id"
LABEL_KUBE_APP_NAME = "app.kubernetes.io/name"
LABEL_ORGANIZATION = "app.kubernetes.io/managed-by"
LABEL_UNIQUE_NAME = "app.kubernetes.io/instance"
LABEL_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
ANNOTATION_ISTIO_SIDECAR = "sidecar.istio.io/inject"
# An env value with this prefix is read from the pod's own field (e.g. "[FIELD_PATH]status.podIP").
PLACEHOLDER_FIELD_PATH = "[FIELD_PATH]"

_V1POD = "V1Pod"


def _pod_from_dict(pod: Mapping[str, Any], api: Any = None) -> "V1Pod":
    """A manifest's pod (API field names) as the client's ``V1Pod``; ``api``: an ApiClient to reuse."""
    import inspect

    from kubernetes.client import ApiClient

    api = api or ApiClient()
    text = json.dumps(pod)
    # kubernetes >= 35 takes the body's text and its content type; older clients a response object.
    if "content_type" in inspect.signature(api.deserialize).parameters:
        return api.deserialize(text, _V1POD, "application/json")

    class _Response:
        data = text

    return api.deserialize(_Response(), _V1POD)


def sanitize_for_serialization(obj: object) -> object:
    """``obj`` (dicts, lists, client models) as plain JSON values with the API's field names."""
    from kubernetes.client import ApiClient

    return ApiClient().sanitize_for_serialization(obj)


def _options(
    queue: str = "",
    service_account: Optional[str] = None,
    priority_class: Optional[str] = None,
    reserved_millicpu: int = RESERVED_MILLICPU,
    reserved_memmb: int = RESERVED_MEMMB,
    efa_device_count: Optional[int] = None,
    job_name: str = "",
) -> Dict[str, Any]:
    return {
            "queue": queue,
            "service_account": service_account or "",
            "priority_class": priority_class or "",
            "reserved_millicpu": reserved_millicpu,
            "reserved_memmb": reserved_memmb,
            "efa_device_count": efa_device_count,
            "job_name": job_name,
    }


def role_to_pod(
    name: str,
    role: Role,
    service_account: Optional[str],
    reserved_millicpu: int = RESERVED_MILLICPU,
    reserved_memmb: int = RESERVED_MEMMB,
    efa_device_count: Optional[int] = None,
) -> "V1Pod":
    """The pod of one replica of ``role`` (its macros already applied), container ``name``."""
    app = AppDef(name="role", roles=[role])
    pod = backend_helper(
        "kubernetes",
        "role_to_pod",
        {
            "name": name,
            "app": json.loads(app_to_core(app)),
            "options": _options("", service_account, None, reserved_millicpu, reserved_memmb, efa_device_count),
        },
    )
    if service_account is not None:  # TorchX sets it as given, "" included
        pod["spec"]["serviceAccountName"] = service_account
    return _pod_from_dict(pod)


def pod_labels(app: AppDef, role_idx: int, role: Role, replica_id: int, app_id: str) -> Dict[str, str]:
    """The labels TorchX puts on a replica's pod (values cut to what the API server accepts)."""
    roles = list(app.roles)
    roles[role_idx] = role
    labeled = AppDef(name=app.name, roles=roles)
    args = {"app": json.loads(app_to_core(labeled)), "role_idx": role_idx, "replica_id": replica_id, "job": app_id}
    return dict(backend_helper("kubernetes", "pod_labels", args))


def _job_name(app: AppDef) -> str:
    # The core's name rule (the app part cut so that pod names fit in 63) around TorchX's
    # make_unique, looked up here so that callers may replace it as TorchX's tests do.
    return normalize_str(make_unique(backend_helper("kubernetes", "job_app_part", {"name": app.name})))


def _resource_with_pods(job: Dict[str, Any]) -> Dict[str, Any]:
    from kubernetes.client import ApiClient

    api = ApiClient()  # one for the Job's pods
    for task in job.get("spec", {}).get("tasks", []):
        task["template"] = _pod_from_dict(task["template"], api)
    return job


def app_to_resource(
    app: AppDef,
    queue: str,
    service_account: Optional[str],
    priority_class: Optional[str] = None,
    reserved_millicpu: int = RESERVED_MILLICPU,
    reserved_memmb: int = RESERVED_MEMMB,
    efa_device_count: Optional[int] = None,
) -> Dict[str, Any]:
    """The Volcano Job of ``app``: one task per replica, each task's template a ``V1Pod``."""
    options = _options(
        queue, service_account, priority_class, reserved_millicpu, reserved_memmb, efa_device_count, _job_name(app)
    )
    job = backend_helper("kubernetes", "app_to_resource", {"app": json.loads(app_to_core(app)), "options": options})
    return _resource_with_pods(job)


@dataclass
class KubernetesJob:
    """What ``schedule`` creates: the Volcano Job (``resource``) and the workspace images pushed
    first (``images_to_push``: image -> (repository, tag))."""

    images_to_push: Dict[str, Tuple[str, str]]
    resource: Dict[str, Any]

    def __str__(self) -> str:
        return yaml.dump(sanitize_for_serialization(self.resource))

    def __repr__(self) -> str:
        return str(self)


@dataclass
class Opts(StructuredOpts):
    """Run options of the kubernetes scheduler as a typed dataclass (``torchx runopts kubernetes``
    lists the same, declared by the core)."""

    queue: str
    """Volcano queue to schedule job in."""
    namespace: str = "default"
    """Kubernetes namespace to schedule job in."""
    service_account: Optional[str] = None
    """The service account name to set on the pod specs."""
    priority_class: Optional[str] = None
    """The name of the PriorityClass to set on the job specs."""
    validate_spec: bool = False
    """Validate the job with the API server's dry run (dryRun=All) when the dry run is made."""
    reserved_millicpu: int = RESERVED_MILLICPU
    """CPU (millicores) kept for Kubernetes on each node."""
    reserved_memmb: int = RESERVED_MEMMB
    """Memory (MB) kept for Kubernetes on each node."""
    image_repo: Optional[str] = None
    """The repository workspace images are pushed to (push access needed)."""
    efa_device_count: Optional[int] = None
    """vpc.amazonaws.com/efa devices: unset keeps the resource's count, 0 removes them, N sets N."""
    quiet: bool = False
    """Whether to suppress verbose output for image building."""
    tolerations: Optional[List[str]] = None
    """Taints the pods tolerate, each key[:value][:NoSchedule|PreferNoSchedule|NoExecute]."""
    node_selector: Optional[Dict[str, str]] = None
    """Node labels the pods must match, label:value."""


KubernetesOpts = Opts


class KubernetesScheduler(CoreBackend, Scheduler[Mapping[str, CfgVal]]):
    """Runs apps as Volcano Jobs (the core's ``kubernetes`` back-end). ``client`` and
    ``docker_client`` are kept for TorchX's signature; the core reads the kubeconfig and talks to
    the API server and the container engine itself."""

    def __init__(self, session_name: str, client: Any = None, docker_client: Any = None) -> None:
        super().__init__("kubernetes", session_name)
        self._client = client
        self._docker_client = docker_client

    def _run_opts(self) -> runopts:
        return runopts._from_json(core().scheduler_runopts(self.backend))

    def _validate(self, app: AppDef, scheduler: str, cfg: Optional[Mapping[str, CfgVal]] = None) -> None:
        """TorchX's kubernetes scheduler checks nothing here; the core refuses what Volcano cannot run."""

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo[KubernetesJob]:
        import kubernetes.client  # noqa: F401  (the request's pods are the client's V1Pod, as TorchX's)

        return AppDryRunInfo(self._request_from_native(json.loads(self._dryrun_payload(app, cfg))), repr)

    def _request_from_native(self, payload: Dict[str, Any]) -> KubernetesJob:
        images = {ref: tuple(ref.rsplit(":", 1)) for ref in payload.get("push", [])}
        return KubernetesJob(images_to_push=images, resource=_resource_with_pods(payload["job"]))

    def schedule(self, dryrun_info: AppDryRunInfo[KubernetesJob]) -> str:
        request: KubernetesJob = dryrun_info.request
        job = cast(Dict[str, Any], sanitize_for_serialization(request.resource))
        # The Job's own namespace (the dry run writes it; an edit may change it) wins over the cfg's.
        metadata = job.setdefault("metadata", {})
        namespace = metadata.get("namespace") or dryrun_info._cfg.get("namespace") or "default"
        metadata["namespace"] = namespace
        push = [f"{repo}:{tag}" for repo, tag in request.images_to_push.values()]
        return self._schedule_core(dryrun_info, json.dumps({"namespace": namespace, "job": job, "push": push}))
    def _delete_existing(self, app_id: str) -> None:
        self._delete_core(app_id)


def create_scheduler(
    session_name: str, client: Any = None, docker_client: Any = None, **kwargs: Any
) -> KubernetesScheduler:
    return KubernetesScheduler(session_name=session_name, client=client, docker_client=docker_client)
