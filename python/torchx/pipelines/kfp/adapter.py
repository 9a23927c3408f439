"""A TorchX AppDef as a Kubeflow Pipelines v2 step.

One role with one replica becomes a KFP container component: its image, its entrypoint as the
command and its args, its env, CPU / memory requests and limits, GPUs as an accelerator limit and
type, retries, and Kubernetes volume mounts (through ``kfp-kubernetes`` where installed). TorchX's
macros are resolved as for one replica: ``${img_root}`` empty, ``${replica_id}`` 0, ``${app_id}``
an id made unique when the step is built, ``${rank0_env}`` naming ``TORCHX_RANK0_HOST``, which the
step sets to ``localhost``. What a KFP container step cannot express (several roles or replicas,
host paths and devices, capabilities without ``kfp-kubernetes``) is an error naming the field;
``resource_from_app`` runs an app of any shape as a Volcano Job created by a kubectl step.
"""

import json
import uuid
from typing import Any, Callable, Mapping, Optional, Tuple

import yaml
from kfp import dsl
from kfp.components import load_component_from_text

from torchx.specs import AppDef, BindMount, DeviceMount, Role, VolumeMount, macros
from torchx.util.strings import normalize_str

# The env var ${rank0_env} names, set to the step itself: a one-replica job is its own rank 0.
RANK0_ENV = "TORCHX_RANK0_HOST"
# The kubectl image resource_from_app's step runs (any image with kubectl and sh will do).
KUBECTL_IMAGE = "bitnami/kubectl:1.31"

ContainerFactory = Callable[..., dsl.PipelineTask]


class KfpAdapterError(ValueError, AssertionError):
    """What KFP cannot express. A ValueError naming the field; an AssertionError too, which is what
    TorchX 0.7.0's adapter raised for the same checks."""


def _single_role(app: AppDef) -> Role:
    if len(app.roles) != 1:
        names = ", ".join(r.name for r in app.roles)
        raise KfpAdapterError(
            f"app `{app.name}`: roles: a KFP container step runs one role, got {len(app.roles)} ({names}); "
            "use resource_from_app for several roles"
        )
    role = app.roles[0]
    if role.num_replicas != 1:
        raise KfpAdapterError(
            f"app `{app.name}`: roles[0].num_replicas: a KFP container step runs one replica, got "
            f"{role.num_replicas}; use resource_from_app for several replicas"
        )
    return role


def _resolved(app: AppDef, role: Role) -> Role:
    app_id = normalize_str(f"{app.name}-{uuid.uuid4().hex[:8]}")
    values = macros.Values(img_root="", app_id=app_id, replica_id="0", rank0_env=RANK0_ENV)
    return values.apply(role)


def component_spec_from_app(app: AppDef) -> Tuple[str, Role]:
    """The KFP component (YAML text) of ``app``'s one role, and that role with its macros resolved."""
    role = _resolved(app, _single_role(app))
    env = {RANK0_ENV: "localhost", **{k: str(v) for k, v in role.env.items()}}
    spec = {
        "name": f"{app.name}-{role.name}",
        "description": f"KFP wrapper for TorchX component {app.name}, role {role.name}",
        "implementation": {
            "container": {
                "image": role.image,
                "command": [role.entrypoint],
                "args": list(role.args),
                "env": env,
            }
        },
    }
    return yaml.safe_dump(spec, sort_keys=False), role


def _kubernetes() -> Any:
    try:
        from kfp import kubernetes
    except ImportError:
        return None
    return kubernetes


def _apply_resources(task: dsl.PipelineTask, role: Role, accelerator_type: Optional[str]) -> None:
    r = role.resource
    if r.cpu is not None and r.cpu > 0:
        cpu = f"{int(round(r.cpu * 1000))}m"
        task.set_cpu_request(cpu).set_cpu_limit(cpu)
    if r.memMB is not None and r.memMB > 0:
        mem = f"{int(r.memMB)}M"
        task.set_memory_request(mem).set_memory_limit(mem)
    if r.gpu is not None and r.gpu > 0:
        task.set_accelerator_type(accelerator_type or "nvidia.com/gpu")
        task.set_accelerator_limit(int(r.gpu))
    elif accelerator_type:
        raise KfpAdapterError("accelerator_type: the role asks for no GPUs (roles[0].resource.gpu is 0)")
    if r.capabilities:
        k8s = _kubernetes()
        if k8s is None:
            raise KfpAdapterError(
                "roles[0].resource.capabilities: KFP expresses them as node selectors through kfp-kubernetes; "
                "pip install kfp-kubernetes"
            )
        for key, value in r.capabilities.items():
            k8s.add_node_selector(task, label_key=str(key), label_value=str(value))


def _check_mounts(role: Role) -> None:
    for i, m in enumerate(role.mounts):
        field = f"roles[0].mounts[{i}]"
        if isinstance(m, (BindMount, DeviceMount)):
            kind = "a host path" if isinstance(m, BindMount) else "a host device"
            raise KfpAdapterError(f"{field}: KFP cannot mount {kind}; use a VolumeMount (type=volume)")
        if isinstance(m, VolumeMount) and m.read_only:
            raise KfpAdapterError(f"{field}.read_only: KFP mounts a PVC read-write only")
        if isinstance(m, VolumeMount) and _kubernetes() is None:
            raise KfpAdapterError(f"{field}: KFP mounts volumes through kfp-kubernetes; pip install kfp-kubernetes")


def _apply_mounts(task: dsl.PipelineTask, role: Role) -> None:
    for m in role.mounts:
        if isinstance(m, VolumeMount):
            _kubernetes().mount_pvc(task, pvc_name=m.src, mount_path=m.dst_path)


def component_from_app(app: AppDef, ui_metadata: Optional[Mapping[str, object]] = None) -> ContainerFactory:
    """A factory of ``app``'s step, to call inside a ``@dsl.pipeline``: each call adds a task with
    the role's resources, env, retries and mounts. Keyword arguments of the call:
    ``display_name``, ``enable_caching``, ``accelerator_type`` (default ``nvidia.com/gpu`` when the
    role has GPUs)."""
    if ui_metadata is not None:
        raise KfpAdapterError(
            "ui_metadata: KFP v2 has no UI metadata files; write a dsl.Output[dsl.Markdown] artifact instead"
        )
    text, role = component_spec_from_app(app)
    _check_mounts(role)  # before any pipeline is built around it
    component = load_component_from_text(text)

    def factory(
        *args: object,
        display_name: Optional[str] = None,
        enable_caching: Optional[bool] = None,
        accelerator_type: Optional[str] = None,
        **kwargs: object,
    ) -> dsl.PipelineTask:
        task = component(*args, **kwargs)
        _apply_resources(task, role, accelerator_type)
        _apply_mounts(task, role)
        if role.max_retries > 0:
            task.set_retry(num_retries=role.max_retries)
        if display_name:
            task.set_display_name(display_name)
        if enable_caching is not None:
            task.set_caching_options(enable_caching)
        return task

    factory.component_spec = text  # type: ignore[attr-defined]  # TorchX's KFPContainerFactory
    return factory


def container_from_app(
    app: AppDef, *args: object, ui_metadata: Optional[Mapping[str, object]] = None, **kwargs: object
) -> dsl.PipelineTask:
    """``app``'s step as a task of the pipeline being built: ``component_from_app(app)(...)``."""
    return component_from_app(app, ui_metadata)(*args, **kwargs)


# kubectl's loop for resource_from_app: create the Job, then wait for Volcano's verdict.
_APPLY_AND_WAIT = """set -eu
name=$(printf '%s' "$TORCHX_VOLCANO_JOB" | kubectl create -f - -o name)
echo "created $name"
while true; do
  phase=$(kubectl get "$name" -o jsonpath='{.status.state.phase}')
  case "$phase" in
    Completed) echo "$name $phase"; exit 0 ;;
    Failed|Aborted|Terminated) echo "$name $phase" >&2; exit 1 ;;
  esac
  sleep 5
done
"""


def resource_from_app(
    app: AppDef, queue: str, service_account: Optional[str] = None, image: str = KUBECTL_IMAGE
) -> dsl.PipelineTask:
    """``app``, of any number of roles and replicas, as the Volcano Job the kubernetes scheduler
    builds, created by a kubectl step that succeeds when the Job completes and fails when it
    fails (kfp 2 has no ResourceOp). The step's pod needs a service account allowed to create and
    get ``jobs.batch.volcano.sh``."""
    from kubernetes.client import ApiClient

    from torchx.schedulers.kubernetes_scheduler import app_to_resource

    job = ApiClient().sanitize_for_serialization(app_to_resource(app, queue, service_account))
    spec = {
        "name": f"{app.name}-volcano-job",
        "description": f"Runs TorchX app {app.name} as a Volcano Job",
        "implementation": {
            "container": {
                "image": image,
                "command": ["sh", "-c", _APPLY_AND_WAIT],
                "env": {"TORCHX_VOLCANO_JOB": json.dumps(job, sort_keys=True)},
            }
        },
    }
    return load_component_from_text(yaml.safe_dump(spec, sort_keys=False))()
