"""Every kind of manifest the kubernetes scheduler writes, held to the official schemas: Volcano's
Job CRD and admission rules, and Kubernetes' pod template schema (volcano_schema.py). The apps
cover each field TorchX maps: replicas and roles, resources and devices, every mount type, env
from pod fields, ports, retry policies, elastic min_replicas, instance types, and the runopts."""

import pathlib
import sys

import pytest
import yaml

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from volcano_schema import validate_job  # noqa: E402

from torchx.runner import get_runner  # noqa: E402
from torchx.specs import AppDef, BindMount, DeviceMount, Resource, RetryPolicy, Role, VolumeMount  # noqa: E402


def role(name="trainer", **kw):
    kw.setdefault("image", "ghcr.io/pytorch/torchx:0.7.0")
    kw.setdefault("entrypoint", "python")
    kw.setdefault("args", ["-m", "train", "--rank0", "${rank0_env}", "--replica", "${replica_id}"])
    kw.setdefault("resource", Resource(cpu=4, gpu=0, memMB=8192))
    return Role(name, **kw)


APPS = {
    "one_replica": AppDef("echo", [role(num_replicas=1)]),
    "ddp_2x_with_gpus_and_devices": AppDef("ddp", [role(
        num_replicas=2, resource=Resource(cpu=8, gpu=2, memMB=32000, devices={"vpc.amazonaws.com/efa": 1},
                                          capabilities={"node.kubernetes.io/instance-type": "p4d.24xlarge"}),
        port_map={"c10d": 29500, "tb": 6006})]),
    "every_mount": AppDef("mounts", [role(mounts=[
        BindMount(src_path="/data", dst_path="/mnt/data", read_only=True),
        VolumeMount(src="my-claim", dst_path="/mnt/claim", read_only=False),
        DeviceMount(src_path="/dev/fuse", dst_path="/dev/fuse", permissions="rwm"),
        DeviceMount(src_path="/dev/ro", dst_path="/dev/ro", permissions="r")])]),
    "env_from_pod_fields": AppDef("env", [role(env={"POD_IP": "[FIELD_PATH]status.podIP", "PLAIN": "1",
                                                  "EMPTY": "", "QUOTE": "it's \"x\""})]),
    "application_retries_two_roles": AppDef("multi", [
        role("trainer", num_replicas=2, max_retries=3),
        role("Reader_Role", num_replicas=1, max_retries=1, resource=Resource(cpu=1, gpu=0, memMB=512))]),
    "replica_retries": AppDef("replica", [role(num_replicas=3, max_retries=2, retry_policy=RetryPolicy.REPLICA)]),
    "role_retries_one_role": AppDef("rolepol", [role(num_replicas=2, max_retries=1, retry_policy=RetryPolicy.ROLE)]),
    "elastic": AppDef("elastic", [role(num_replicas=4, min_replicas=2)]),
    "tiny_resources": AppDef("tiny", [role(resource=Resource(cpu=1, gpu=0, memMB=100))]),
    "hostile_names": AppDef("My_App.Name.v2!" + "x" * 80,
                            [role("Trainer_Role.with.dots" + "y" * 40, num_replicas=2)]),
}

CFGS = {
    "minimal": {"queue": "default"},
    "everything": {"queue": "research", "namespace": "team-a", "service_account": "trainer-sa",
                   "priority_class": "high-priority",
                   "tolerations": ["nvidia.com/gpu:present:NoSchedule", "spot", "dedicated=ml:NoExecute"],
                   "node_selector": {"topology.kubernetes.io/zone": "us-east-1a", "pool": "gpu"}},
}


@pytest.fixture(scope="module")
def runner():
    with get_runner() as r:
        yield r


@pytest.mark.parametrize("cfg", CFGS.values(), ids=CFGS.keys())
@pytest.mark.parametrize("app", APPS.values(), ids=APPS.keys())
def test_manifest_is_valid(runner, app, cfg):
    info = runner.dryrun(app, "kubernetes", cfg=dict(cfg))
    job = yaml.safe_load(str(info.request))
    validate_job(job)
    replicas = sum(r.num_replicas for r in app.roles)
    assert len(job["spec"]["tasks"]) == replicas
    assert job["metadata"]["namespace"] == cfg.get("namespace", "default")


def test_mount_and_device_mapping(runner):
    job = yaml.safe_load(str(runner.dryrun(APPS["every_mount"], "kubernetes", cfg={"queue": "q"}).request))
    pod = job["spec"]["tasks"][0]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["dshm"] == {"name": "dshm", "emptyDir": {"medium": "Memory"}}
    assert volumes["mount-0"]["hostPath"] == {"path": "/data"}
    assert volumes["mount-1"]["persistentVolumeClaim"] == {"claimName": "my-claim"}
    assert volumes["mount-2"]["hostPath"] == {"path": "/dev/fuse"}
    mounts = {m["name"]: m for m in pod["containers"][0]["volumeMounts"]}
    assert mounts["mount-0"]["readOnly"] is True and mounts["mount-1"]["readOnly"] is False
    assert mounts["mount-2"]["readOnly"] is False and mounts["mount-3"]["readOnly"] is True
    assert pod["containers"][0]["securityContext"] == {"privileged": True}


def test_resources_env_ports_and_rank0(runner):
    job = yaml.safe_load(str(runner.dryrun(APPS["ddp_2x_with_gpus_and_devices"], "kubernetes",
                                           cfg={"queue": "q"}).request))
    t0, t1 = job["spec"]["tasks"]
    c0, c1 = t0["template"]["spec"]["containers"][0], t1["template"]["spec"]["containers"][0]
    assert c0["resources"] == {"limits": {"cpu": "8000m", "memory": "32000M", "nvidia.com/gpu": "2",
                                          "vpc.amazonaws.com/efa": "1"},
                               "requests": {"cpu": "7900m", "memory": "30976M", "nvidia.com/gpu": "2"}}
    assert t0["template"]["spec"]["nodeSelector"] == {"node.kubernetes.io/instance-type": "p4d.24xlarge"}
    assert {"name": "TORCHX_RANK0_HOST", "value": "localhost"} in c0["env"]
    assert c0["command"][4] == "TORCHX_RANK0_HOST" and c1["command"][4] == "VC_TRAINER_0_HOSTS"
    assert c1["command"][6] == "1"
    assert sorted(p["containerPort"] for p in c0["ports"]) == [6006, 29500]


def test_retry_policies(runner):
    app = yaml.safe_load(str(runner.dryrun(APPS["application_retries_two_roles"], "kubernetes",
                                           cfg={"queue": "q"}).request))
    assert app["spec"]["maxRetry"] == 1  # the smallest role's
    assert {p["action"] for t in app["spec"]["tasks"] for p in t["policies"]} == {"RestartJob"}
    rep = yaml.safe_load(str(runner.dryrun(APPS["replica_retries"], "kubernetes", cfg={"queue": "q"}).request))
    assert {p["action"] for t in rep["spec"]["tasks"] for p in t["policies"]} == {"RestartTask"}
    elastic = yaml.safe_load(str(runner.dryrun(APPS["elastic"], "kubernetes", cfg={"queue": "q"}).request))
    assert [t["minAvailable"] for t in elastic["spec"]["tasks"]] == [1, 1, 0, 0]


def test_role_policy_with_several_roles_is_refused(runner):
    app = AppDef("x", [role("a", max_retries=1, retry_policy=RetryPolicy.ROLE), role("b")])
    with pytest.raises(Exception, match="ROLE.*APPLICATION, REPLICA"):
        runner.dryrun(app, "kubernetes", cfg={"queue": "q"})
