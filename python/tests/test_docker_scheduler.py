"""torchx.schedulers.docker_scheduler without an engine: the core's containers as TorchX's DockerJob
(docker-py kwargs a caller edits) and back to the Engine API bodies the core sends."""

import json

import pytest

pytest.importorskip("docker")
from docker.types import DeviceRequest, Mount  # noqa: E402

from torchx.schedulers import docker_scheduler as ds  # noqa: E402
from torchx.specs import AppDef, BindMount, DeviceMount, Resource, Role, macros  # noqa: E402


def app():
    return AppDef("test", [Role("trainer", image="img:1", entrypoint="main", args=[macros.app_id], env={"FOO": "bar"},
                                resource=Resource(cpu=2, gpu=4, memMB=3000), max_retries=3,
                                mounts=[BindMount("/tmp", "/tmp", read_only=True), DeviceMount("/dev/null", "/dev/null")])])


def test_dryrun_is_torchx_docker_job():
    info = ds.create_scheduler("s").submit_dryrun(app(), ds.Opts(env={"X": "1"}, privileged=True))
    job = info.request
    assert isinstance(job, ds.DockerJob) and len(job.containers) == 1
    c = job.containers[0]
    assert c.image == "img:1" and c.command == ["main", job.app_id]
    k = c.kwargs
    assert k["environment"]["FOO"] == "bar" and k["environment"]["X"] == "1"
    assert k["environment"]["TORCHX_IMAGE"] == "img:1"
    assert k["environment"]["TORCHX_RANK0_HOST"] == f"{job.app_id}-trainer-0"
    assert k["mem_limit"] == "3000m" and k["shm_size"] == "3000m" and k["nano_cpus"] == 2_000_000_000
    assert k["device_requests"] == [DeviceRequest(count=4, capabilities=[["compute", "utility"]])]
    assert k["devices"] == ["/dev/null:/dev/null:rwm"]
    assert k["mounts"] == [Mount(target="/tmp", source="/tmp", read_only=True, type="bind")]
    assert k["restart_policy"] == {"Name": "on-failure", "MaximumRetryCount": 3}
    assert k["privileged"] is True and k["labels"][ds.LABEL_APP_ID] == job.app_id
    assert "img:1" in str(job)


def test_schedule_sends_the_edited_containers(monkeypatch):
    sched = ds.create_scheduler("s")
    info = sched.submit_dryrun(app(), ds.Opts())
    c = info.request.containers[0]
    c.kwargs["environment"]["EDITED"] = "1"
    c.kwargs["mem_limit"] = "1g"
    sent = {}

    class Runner:
        def schedule_request(self, backend, app_json, app_id, payload, request=""):
            sent.update(backend=backend, payload=json.loads(payload))
            return f"local_docker://s/{app_id}"

    monkeypatch.setattr(sched, "_runner", lambda: Runner())
    assert sched.schedule(info) == info.request.app_id
    body = sent["payload"]["containers"][0]
    assert body["name"] == f"{info.request.app_id}-trainer-0"
    cfg = body["config"]
    assert "EDITED=1" in cfg["Env"] and cfg["Image"] == "img:1"
    host = cfg["HostConfig"]
    assert host["Memory"] == 1024 ** 3 and host["ShmSize"] == 3000 * 1024 ** 2
    assert host["Devices"] == [{"PathOnHost": "/dev/null", "PathInContainer": "/dev/null", "CgroupPermissions": "rwm"}]
    assert host["Mounts"][0]["Target"] == "/tmp" and host["DeviceRequests"][0]["Count"] == 4


def test_unknown_kwargs_and_bad_sizes_are_named():
    sched = ds.create_scheduler("s")
    info = sched.submit_dryrun(app(), ds.Opts())
    info.request.containers[0].kwargs["cap_add"] = ["SYS_ADMIN"]
    with pytest.raises(ValueError, match="cap_add"):
        sched.schedule(info)
    del info.request.containers[0].kwargs["cap_add"]
    info.request.containers[0].kwargs["mem_limit"] = "lots"
    with pytest.raises(ValueError, match="mem_limit"):
        sched.schedule(info)
    info.request.containers[0].kwargs["mem_limit"] = "1g"
    for bad in ("/dev/a:/dev/b:rwx", "", 7):
        info.request.containers[0].kwargs["devices"] = [bad]
        with pytest.raises(ValueError, match=r"kwargs\['devices'\]"):
            sched.schedule(info)


def test_has_docker_is_false_without_docker_py(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "docker", None)
    assert ds.has_docker() is False
