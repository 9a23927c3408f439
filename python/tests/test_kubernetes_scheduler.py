"""torchx.schedulers.kubernetes_scheduler without a cluster: the core's Volcano Job as TorchX's
KubernetesJob (V1Pod templates a caller edits), role_to_pod / app_to_resource / pod_labels, HEAD's
options (reserved_millicpu, reserved_memmb, efa_device_count, validate_spec) and overlays. The API
server side (a subclassing plugin included) is tests/integration/kubernetes."""

import json

import pytest

pytest.importorskip("kubernetes")
from kubernetes.client.models import V1EnvVar, V1Pod  # noqa: E402

from torchx.schedulers import kubernetes_scheduler as k8s  # noqa: E402
from torchx.specs import AppDef, BindMount, DeviceMount, Resource, Role, VolumeMount, macros  # noqa: E402
from torchx.specs.overlays import JOIN, set_overlay  # noqa: E402


def role(**kw):
    base = dict(name="trainer", image="img:1", entrypoint="python", args=["-m", "train", macros.app_id],
                resource=Resource(cpu=2, gpu=1, memMB=3000))
    base.update(kw)
    return Role(**base)


def test_role_to_pod_is_a_v1pod_with_requests_under_limits_and_options():
    pod = k8s.role_to_pod("trainer-0", role(env={"IP": f"{k8s.PLACEHOLDER_FIELD_PATH}status.podIP"}), "sa")
    assert isinstance(pod, V1Pod)
    c = pod.spec.containers[0]
    assert (c.name, c.image, c.command) == ("trainer-0", "img:1", ["python", "-m", "train", macros.app_id])
    assert c.resources.limits == {"cpu": "2000m", "memory": "3000M", "nvidia.com/gpu": "1"}
    assert c.resources.requests == {"cpu": "1900m", "memory": "1976M", "nvidia.com/gpu": "1"}
    assert c.env[0].value_from.field_ref.field_path == "status.podIP"
    assert pod.spec.service_account_name == "sa" and pod.spec.restart_policy == "Never"
    assert pod.metadata.annotations == {k8s.ANNOTATION_ISTIO_SIDECAR: "false"}

    pod = k8s.role_to_pod("t", role(), None, reserved_millicpu=0, reserved_memmb=1000)
    assert pod.spec.containers[0].resources.requests["cpu"] == "2000m"
    assert pod.spec.containers[0].resources.requests["memory"] == "2000M"
    efa = role(resource=Resource(cpu=1, gpu=0, memMB=100, devices={"vpc.amazonaws.com/efa": 4}))
    assert k8s.role_to_pod("t", efa, None).spec.containers[0].resources.limits["vpc.amazonaws.com/efa"] == "4"
    assert "vpc.amazonaws.com/efa" not in k8s.role_to_pod("t", efa, None, efa_device_count=0).spec.containers[0].resources.limits
    assert k8s.role_to_pod("t", role(), None, efa_device_count=8).spec.containers[0].resources.limits["vpc.amazonaws.com/efa"] == "8"


def test_role_to_pod_mounts():
    r = role(mounts=[BindMount("/data", "/d", read_only=True), VolumeMount("claim", "/c"),
                     DeviceMount("/dev/fuse", "/dev/fuse", permissions="r")])
    pod = k8s.role_to_pod("t", r, None)
    vols = {v.name: v for v in pod.spec.volumes}
    assert vols["dshm"].empty_dir.medium == "Memory"
    assert vols["mount-0"].host_path.path == "/data"
    assert vols["mount-1"].persistent_volume_claim.claim_name == "claim"
    assert [(m.mount_path, m.read_only) for m in pod.spec.containers[0].volume_mounts] == [
        ("/dev/shm", None), ("/d", True), ("/c", False), ("/dev/fuse", True)]
    assert pod.spec.containers[0].security_context.privileged is True


def test_app_to_resource_resolves_macros_per_replica_with_torchx_env(monkeypatch):
    monkeypatch.setattr(k8s, "make_unique", lambda name: f"{name}-x1")
    app = AppDef("My App", [role(num_replicas=2, max_retries=2, min_replicas=1)])
    res = k8s.app_to_resource(app, "q", service_account=None, priority_class="high")
    assert res["metadata"]["name"] == "myapp-x1"
    assert res["spec"]["queue"] == "q" and res["spec"]["priorityClassName"] == "high"
    tasks = res["spec"]["tasks"]
    assert [t["name"] for t in tasks] == ["trainer-0", "trainer-1"]
    assert [t["minAvailable"] for t in tasks] == [1, 0]
    assert tasks[0]["policies"] == [{"event": "PodEvicted", "action": "RestartJob"},
                                    {"event": "PodFailed", "action": "RestartJob"}]
    c0 = tasks[0]["template"].spec.containers[0]
    assert c0.command[-1] == "myapp-x1"
    assert V1EnvVar(name="TORCHX_IMAGE", value="img:1") in c0.env
    assert V1EnvVar(name="TORCHX_RANK0_HOST", value="localhost") in c0.env
    assert tasks[1]["template"].metadata.labels[k8s.LABEL_REPLICA_ID] == "1"


def test_pod_labels_clean_values_as_torchx():
    app = AppDef("foo+bar", [Role("a/b", image="x")])
    labels = k8s.pod_labels(app, 0, app.roles[0], 3, "foobar-1")
    assert labels[k8s.LABEL_APP_NAME] == "foo.bar" and labels[k8s.LABEL_ROLE_NAME] == "a.b"
    assert labels[k8s.LABEL_REPLICA_ID] == "3" and labels[k8s.LABEL_UNIQUE_NAME] == "foobar-1"


def test_dryrun_gives_an_editable_job_with_overlays_and_options():
    r = role(name="trainer")
    set_overlay(r, "kubernetes", "V1Pod", {"spec": {JOIN("containers", on="name"): [
        {"name": "trainer-0", "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}}}]}})
    sched = k8s.create_scheduler("s")
    info = sched.submit_dryrun(AppDef("a", [r]), k8s.Opts(queue="q", reserved_memmb=0, efa_device_count=2))
    job = info.request
    assert isinstance(job, k8s.KubernetesJob) and job.images_to_push == {}
    pod = job.resource["spec"]["tasks"][0]["template"]
    assert pod.spec.containers[0].readiness_probe.http_get.path == "/ready"
    assert pod.spec.containers[0].resources.requests["memory"] == "3000M"
    assert pod.spec.containers[0].resources.limits["vpc.amazonaws.com/efa"] == "2"
    assert "kind: Job" in str(job) and "readinessProbe" in str(job)
    opts = sched.run_opts()
    for name in ("validate_spec", "reserved_millicpu", "reserved_memmb", "efa_device_count", "queue", "namespace"):
        assert opts.get(name) is not None, name
    assert opts.get("validate_spec").default is False


def test_bad_option_values_name_the_option():
    sched = k8s.create_scheduler("s")
    with pytest.raises(ValueError, match="reserved_millicpu"):
        sched.submit_dryrun(AppDef("a", [role()]), {"queue": "q", "reserved_millicpu": -1})


def test_validate_spec_asks_the_api_server(tmp_path, monkeypatch):
    # No kubeconfig anywhere: asking for validation is an error that says so; not asking stays offline.
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    sched = k8s.create_scheduler("s")
    assert sched.submit_dryrun(AppDef("a", [role()]), {"queue": "q"}) is not None
    with pytest.raises(Exception, match="kubeconfig"):
        sched.submit_dryrun(AppDef("a", [role()]), {"queue": "q", "validate_spec": True})


def test_schedule_sends_the_edited_job(monkeypatch):
    sched = k8s.create_scheduler("s")
    info = sched.submit_dryrun(AppDef("a", [role()]), {"queue": "q", "namespace": "team"})
    info.request.resource["spec"]["tasks"][0]["template"].metadata.labels["edited"] = "yes"
    assert info.request.resource["metadata"]["namespace"] == "team"
    sent = {}

    class Runner:
        def schedule_request(self, backend, app_json, app_id, payload, request=""):
            sent.update(backend=backend, payload=json.loads(payload))
            return f"kubernetes://s/team:{sent['payload']['job']['metadata']['name']}"

    monkeypatch.setattr(sched, "_runner", lambda: Runner())
    app_id = sched.schedule(info)
    assert sent["backend"] == "kubernetes" and sent["payload"]["namespace"] == "team"
    assert sent["payload"]["job"]["spec"]["tasks"][0]["template"]["metadata"]["labels"]["edited"] == "yes"
    assert app_id.startswith("team:a-")


def test_role_to_pod_names_a_bad_count():
    with pytest.raises(ValueError, match="reserved_millicpu must be an int from 0"):
        k8s.role_to_pod("t", role(), None, reserved_millicpu="300")
    with pytest.raises(ValueError, match="efa_device_count must be an int from 0"):
        k8s.role_to_pod("t", role(), None, efa_device_count=-2)
