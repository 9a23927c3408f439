"""The kubernetes scheduler's protocol against an API server fake (fake_apiserver.py): the torchx
CLI reads a kubeconfig, creates Volcano Jobs, reads their state, logs (whole and followed),
lists, cancels (a Volcano AbortJob command) and deletes them, over TLS with each kind of
credential. No real cluster runs here; test_real_cluster runs the same flow against one when
TORCHX_KUBERNETES_TEST_KUBECONFIG names its kubeconfig (see docs/kubernetes.md)."""

import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from apiserver_fixtures import make_cli  # noqa: E402
from fake_apiserver import kubeconfig  # noqa: E402
from volcano_schema import validate_command, validate_job  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[3]
BINARY = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")


@pytest.fixture
def torchx(server, pki, tmp_path):
    return make_cli(tmp_path, kubeconfig(server.url, pki, "cert"))


def submit(torchx, *component, cfg="queue=default"):
    res = torchx("run", "-s", "kubernetes", "-cfg", cfg, *component)
    handle = res.stdout.strip().splitlines()[0]
    assert handle.startswith("kubernetes://"), res.stdout
    ns, name = handle.split("/")[-1].split(":")
    return handle, ns, name


def state_of(torchx, handle):
    return json.loads(torchx("status", "--json", handle).stdout)


def test_run_creates_a_volcano_job_and_follows_its_phases(torchx, server):
    handle, ns, name = submit(torchx, "utils.echo", "--msg", "hello k8s", "--num_replicas", "2")
    assert ns == "default"
    posts = [r for r in server.requests if r[0] == "POST"]
    assert posts[0][1] == "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs"
    assert posts[0][3] == "cert"  # the client certificate from the kubeconfig
    job = json.loads(posts[0][4])
    assert job["kind"] == "Job" and job["metadata"]["name"] == name
    validate_job(job)  # what went over the wire, held to Volcano's and Kubernetes' schemas
    assert [t["name"] for t in job["spec"]["tasks"]] == ["echo-0", "echo-1"]
    assert job["spec"]["queue"] == "default"

    assert state_of(torchx, handle)["state"] == "SUBMITTED"  # the controller has not seen it yet
    server.set_phase(ns, name, "Pending")
    assert state_of(torchx, handle)["state"] == "PENDING"
    server.set_phase(ns, name, "Running", {"echo-0": "Running", "echo-1": "Pending"})
    st = state_of(torchx, handle)
    assert st["state"] == "RUNNING"
    replicas = st["roles"][0]["replicas"]
    assert [(r["id"], r["state"]) for r in replicas] == [(0, 3), (1, 2)]  # AppState RUNNING, PENDING
    assert replicas[0]["hostname"] == f"{name}-echo-0-0"
    server.set_phase(ns, name, "Completed", {"echo-0": "Succeeded", "echo-1": "Succeeded"})
    assert state_of(torchx, handle)["state"] == "SUCCEEDED"
    server.set_phase(ns, name, "Failed", {"echo-0": "Failed"}, retry_count=2, message="pod failed")
    st = state_of(torchx, handle)
    assert (st["state"], st["num_restarts"]) == ("FAILED", 2)
    assert "pod failed" in st["msg"]


def test_pod_problems_reach_the_status(torchx, server):
    handle, ns, name = submit(torchx, "utils.echo", "--num_replicas", "2")
    server.set_phase(ns, name, "Pending", {"echo-0": "Pending", "echo-1": "Pending"})
    server.set_pod_status(ns, f"{name}-echo-0-0", {
        "phase": "Pending",
        "containerStatuses": [{"name": "echo-0", "state": {"waiting": {
            "reason": "ImagePullBackOff", "message": 'Back-off pulling image "nope:latest"'}}}]})
    server.set_pod_status(ns, f"{name}-echo-1-0", {
        "phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                            "message": "0/3 nodes are available: 3 Insufficient cpu."}]})
    st = state_of(torchx, handle)
    assert st["state"] == "PENDING"
    assert 'echo/0: ImagePullBackOff: Back-off pulling image "nope:latest"' in st["msg"]
    assert "echo/1: Unschedulable: 0/3 nodes are available" in st["msg"]
    server.set_phase(ns, name, "Failed", {"echo-0": "Failed", "echo-1": "Succeeded"})
    server.set_pod_status(ns, f"{name}-echo-0-0", {
        "phase": "Failed",
        "containerStatuses": [{"name": "echo-0", "state": {"terminated": {"reason": "OOMKilled", "exitCode": 137}}}]})
    server.set_pod_status(ns, f"{name}-echo-1-0", {"phase": "Succeeded"})
    st = state_of(torchx, handle)
    assert st["state"] == "FAILED"
    assert "echo/0: OOMKilled (exit code 137)" in st["msg"]
    replicas = st["roles"][0]["replicas"]
    assert [r["state"] for r in replicas] == [5, 4]  # AppState FAILED, SUCCEEDED
    text = torchx("status", handle).stdout
    assert "OOMKilled" in text
    assert any(r[1] == f"/api/v1/namespaces/{ns}/pods" and
               r[2].get("labelSelector") == f"app.kubernetes.io/instance={name}" for r in server.requests)


def test_logs_whole_filtered_and_followed(torchx, server):
    handle, ns, name = submit(torchx, "utils.echo", "--msg", "x")
    pod = f"{name}-echo-0-0"
    server.set_phase(ns, name, "Running", {"echo-0": "Running"})
    server.add_log(ns, pod, "old line", when=time.time() - 3600)
    server.add_log(ns, pod, "first")
    server.add_log(ns, pod, "second")
    out = torchx("log", f"{handle}/echo/0").stdout.splitlines()
    assert [l.split(" ", 2)[2] for l in out] == ["old line", "first", "second"]  # echo/0 <timestamp> text
    assert out[0].startswith("echo/0 ") and out[0].split(" ")[1].endswith("Z")
    assert [l.split(" ", 2)[2] for l in torchx("log", "--regex", "sec", f"{handle}/echo/0").stdout.splitlines()] == \
        ["second"]
    log_requests = [r for r in server.requests if r[1].endswith(f"/pods/{pod}/log")]
    assert log_requests[0][2]["timestamps"] == "true"

    follower = subprocess.Popen([BINARY, "log", "-t", f"{handle}/echo/0"], stdout=subprocess.PIPE, text=True,
                                env=torchx.env)
    try:
        def later():
            time.sleep(0.5)
            server.add_log(ns, pod, "third")
            time.sleep(0.3)
            server.set_phase(ns, name, "Completed", {"echo-0": "Succeeded"})
        threading.Thread(target=later).start()
        out, _ = follower.communicate(timeout=30)
    finally:
        follower.kill()
    assert [l.split(" ", 2)[2] for l in out.splitlines()] == ["old line", "first", "second", "third"]
    assert any(r[2].get("follow") == "true" for r in server.requests if r[1].endswith("/log"))

    res = torchx("log", "--streams", "stderr", f"{handle}/echo/0", check=False)
    assert res.returncode != 0 and "combined" in res.stderr
    res = torchx("log", f"{handle}/echo/5", check=False)
    assert res.returncode != 0 and "no replica matches" in res.stderr


def test_following_a_replica_that_has_not_started_waits_for_it(torchx, server):
    handle, ns, name = submit(torchx, "utils.echo")
    pod = f"{name}-echo-0-0"
    res = torchx("log", f"{handle}/echo/0", check=False)  # not following: say why there is no log
    assert res.returncode != 0 and "waiting to start" in res.stderr

    follower = subprocess.Popen([BINARY, "log", "-t", f"{handle}/echo/0"], stdout=subprocess.PIPE, text=True,
                                env=torchx.env)
    try:
        time.sleep(1.5)  # it is asking, and being told the container is waiting
        server.set_phase(ns, name, "Running", {"echo-0": "Running"})
        server.add_log(ns, pod, "started at last")
        time.sleep(1.5)
        server.set_phase(ns, name, "Completed", {"echo-0": "Succeeded"})
        out, _ = follower.communicate(timeout=30)
    finally:
        follower.kill()
    assert out.splitlines()[-1].endswith("started at last")
    waits = [r for r in server.requests if r[1].endswith(f"/pods/{pod}/log") and r[2].get("follow") == "true"]
    assert len(waits) >= 2


def test_list_cancel_and_delete(torchx, server):
    handle, ns, name = submit(torchx, "utils.sh", "sleep", "600")
    server.set_phase(ns, name, "Running", {"sh-0": "Running"})
    listed = torchx("list", "-s", "kubernetes").stdout
    assert f"default:{name}" in listed and "RUNNING" in listed
    assert any(r[2].get("labelSelector") == "app.kubernetes.io/managed-by=torchx.pytorch.org"
               for r in server.requests if r[0] == "GET" and r[1].endswith("/jobs"))

    res = torchx("delete", handle, check=False)
    assert res.returncode != 0 and "cancel it first" in res.stderr

    torchx("cancel", handle)
    command = server.commands[-1]
    validate_command(command)
    assert command["action"] == "AbortJob"
    assert command["target"]["name"] == name
    assert command["target"]["uid"] == server.jobs[(ns, name)]["metadata"]["uid"]
    assert state_of(torchx, handle)["state"] == "CANCELLED"
    torchx("cancel", handle)  # idempotent: a terminal job is left alone
    assert len(server.commands) == 1

    torchx("delete", handle)
    assert (ns, name) not in server.jobs
    delete = next(r for r in server.requests if r[0] == "DELETE")
    assert json.loads(delete[4]) == {"propagationPolicy": "Background"}  # the pods go with the job
    res = torchx("status", handle, check=False)
    assert res.returncode != 0


def test_resources_come_from_the_metrics_api(torchx, server, tmp_path):
    # The kubelet fake runs each pod as a local process and serves its figures as metrics-server
    # would: two replicas, each busy on a core and holding ~60 MiB.
    from fake_kubelet import FakeKubelet
    (tmp_path / "pods").mkdir()
    kubelet = FakeKubelet(server, tmp_path / "pods")
    try:
        busy = "import time\nx = bytearray(60 << 20)\nt = time.time()\nwhile time.time() - t < 60: pass\n"
        app = {"name": "busy", "roles": [{"name": "busy", "image": "python:3", "entrypoint": sys.executable,
                                          "args": ["-c", busy], "num_replicas": 2,
                                          "resource": {"cpu": 1, "gpu": 0, "memMB": 256}}]}
        (tmp_path / "busy.json").write_text(json.dumps(app))
        handle, ns, name = submit(torchx, "./busy.json")
        deadline = time.monotonic() + 30
        while True:
            res = json.loads(torchx("status", "--resources", "--json", handle).stdout)["resources"]
            samples = [r["samples"][-1] if r["samples"] else {} for r in res["replicas"]]
            if all((s.get("cpu_percent") or 0) > 10 and (s.get("rss_bytes") or 0) > 50 << 20 for s in samples):
                break
            assert time.monotonic() < deadline, res
            time.sleep(0.5)
        assert [(r["role"], r["replica_id"]) for r in res["replicas"]] == [("busy", 0), ("busy", 1)]
        assert "metrics-server" in res["note"] and "no GPU figures" in res["gpu_note"]
        metrics = [r for r in server.requests if r[1].startswith("/apis/metrics.k8s.io/")]
        assert metrics[-1][1] == f"/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods"
        assert metrics[-1][2] == {"labelSelector": f"app.kubernetes.io/instance={name}"}
        assert "busy/1" in torchx("status", "--resources", handle).stdout
        # A cluster without metrics-server says so, and the replicas are still listed.
        server.metrics_api = False
        res = json.loads(torchx("status", "--resources", "--json", handle).stdout)["resources"]
        assert "no metrics API" in res["note"] and len(res["replicas"]) == 2
        assert all(not r["samples"] for r in res["replicas"])
        torchx("cancel", handle)
    finally:
        kubelet.stop()


def test_namespace_and_options_reach_the_manifest(torchx, server):
    cfg = ("queue=research,namespace=team,service_account=trainer,priority_class=high,"
           "tolerations=gpu:true:NoSchedule;spot,node_selector=zone:a")
    handle, ns, name = submit(torchx, "utils.echo", cfg=cfg)
    assert ns == "team"
    job = server.jobs[(ns, name)]
    spec = job["spec"]
    assert spec["queue"] == "research" and spec["priorityClassName"] == "high"
    pod = spec["tasks"][0]["template"]["spec"]
    assert pod["serviceAccountName"] == "trainer"
    assert pod["nodeSelector"] == {"zone": "a"}
    assert pod["tolerations"] == [{"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"},
                                  {"key": "spot", "operator": "Exists"}]


def test_api_errors_are_clear(torchx, server, pki, tmp_path):
    res = torchx("run", "-s", "kubernetes", "-cfg", "queue=default,namespace=nope", "utils.echo", check=False)
    assert res.returncode != 0
    assert "Volcano" in res.stderr and "nope" in res.stderr

    res = torchx("run", "-s", "kubernetes", "utils.echo", check=False)
    assert res.returncode != 0 and "queue" in res.stderr  # required runopt

    res = torchx("run", "-s", "kubernetes", "-cfg", "queue=q,tolerations=a:b:Sometimes", "utils.echo", check=False)
    assert res.returncode != 0 and "NoSchedule" in res.stderr

    res = torchx("status", "kubernetes://torchx/no-colon", check=False)
    assert res.returncode != 0 and "<namespace>:<job name>" in res.stderr

    bad = make_cli(tmp_path, kubeconfig(server.url, pki, "token", token="wrong"))
    res = bad("run", "-s", "kubernetes", "-cfg", "queue=default", "utils.echo", check=False)
    assert res.returncode != 0 and "401" in res.stderr


def test_a_job_of_an_odd_shape_is_a_clear_error(torchx, server):
    handle, ns, name = submit(torchx, "utils.echo")
    with server.cond:  # someone edited the job: a phase that is not a string
        server.jobs[(ns, name)]["status"] = {"state": {"phase": 3}}
    res = torchx("status", handle, check=False)
    assert res.returncode != 0 and f"job {ns}:{name} has an unexpected shape" in res.stderr
    # One odd job does not hide the others: the list shows it as UNKNOWN.
    res = torchx("list", "-s", "kubernetes", check=False)
    assert res.returncode == 0 and any(name in l and "UNKNOWN" in l for l in res.stdout.splitlines()), res.stdout


@pytest.fixture
def python_kubeconfig(server, pki, tmp_path, monkeypatch):
    """KUBECONFIG for the Python package in this process, pointing at the fake."""
    cfg = tmp_path / "kubeconfig"
    cfg.write_text(kubeconfig(server.url, pki, "cert"))
    monkeypatch.setenv("KUBECONFIG", str(cfg))


def test_already_exists_is_reported(server, python_kubeconfig):
    from torchx.runner import get_runner
    from torchx.specs import AppDef, Resource, Role

    app = AppDef("dup", [Role("r", image="busybox", entrypoint="true", resource=Resource(cpu=1, gpu=0, memMB=128))])
    with get_runner() as runner:
        info = runner.dryrun(app, "kubernetes", cfg={"queue": "default"})
        runner.schedule(info)
        with pytest.raises(Exception, match="already exists"):
            runner.schedule(info)


def test_since_and_until_through_the_python_api(server, python_kubeconfig):
    import datetime

    from torchx.runner import get_runner

    with get_runner() as runner:
        handle = runner.run_component("utils.echo", ["--msg", "x"], "kubernetes", cfg={"queue": "default"})
        ns, name = handle.split("/")[-1].split(":")
        pod = f"{name}-echo-0-0"
        server.set_phase(ns, name, "Running", {"echo-0": "Running"})
        now = time.time()
        for age, text in ((7200, "two hours ago"), (1800, "half an hour ago"), (5, "just now")):
            server.add_log(ns, pod, text, when=now - age)
        since = datetime.datetime.fromtimestamp(now - 3600)
        until = datetime.datetime.fromtimestamp(now - 60)
        lines = list(runner.log_lines(handle, "echo", 0, since=since, until=until))
    assert [l.split(" ", 1)[1].strip() for l in lines] == ["half an hour ago"]
    query = [r[2] for r in server.requests if r[1].endswith(f"/pods/{pod}/log")][-1]
    assert 3590 <= int(query["sinceSeconds"]) <= 3700  # the window starts at the server


def test_following_a_pod_that_is_gone_ends_with_a_clear_error(server, python_kubeconfig):
    from torchx.runner import get_runner

    with get_runner() as runner:
        handle = runner.run_component("utils.echo", ["--msg", "x"], "kubernetes", cfg={"queue": "default"})
        ns, name = handle.split("/")[-1].split(":")
        with server.cond:  # the pod was evicted and removed; the job still lists the replica
            server.pods.pop((ns, f"{name}-echo-0-0"))
            server.logs.pop((ns, f"{name}-echo-0-0"))
        # The error surfaces on the stream's own thread, after log_lines has returned.
        with pytest.raises(Exception, match=r'no log for echo/0 of .*pods "[^"]*-echo-0-0" not found'):
            list(runner.log_lines(handle, "echo", 0, should_tail=True))


@pytest.mark.parametrize("mode", ["cert-data", "token", "token-file", "exec"])
def test_each_kind_of_credential(server, pki, tmp_path, mode):
    extra = {"TORCHX_KUBERNETES_ALLOW_EXEC": "1"} if mode == "exec" else {}
    (tmp_path / "token").write_text("fake-token\n")
    torchx = make_cli(tmp_path, kubeconfig(server.url, pki, mode), extra)
    handle, ns, name = submit(torchx, "utils.echo")
    assert server.requests[-1][3] == ("cert" if mode == "cert-data" else "token")
    assert state_of(torchx, handle)["state"] == "SUBMITTED"


def test_no_credential_reaches_the_state_directory_or_logs(server, pki, tmp_path):
    # A kubeconfig token, used for a kubernetes app, for a pipeline with a kubernetes step and a
    # local_cwd step, and for local apps beside them: none of it is written where the launcher
    # keeps state and logs (records, pipeline records, the driver's log, replica logs).
    secret = "s3cr3t-token-" + "z" * 24
    state = tmp_path / "state"
    torchx = make_cli(tmp_path, kubeconfig(server.url, pki, "token", token=secret),
                      {"TORCHX_STATE_DIR": str(state)})
    saved, server.token = server.token, secret
    try:
        handle, _, _ = submit(torchx, "utils.echo")
        torchx("status", handle)
        (tmp_path / "flow.yaml").write_text(
            "steps:\n"
            "  remote: {component: utils.echo, scheduler: kubernetes, cfg: {queue: default}}\n"
            "  local: {component: utils.sh, args: [env]}\n")
        pipeline = torchx("pipeline", "run", "flow.yaml").stdout.split()[0]
        local = torchx("run", "--wait", "utils.sh", "env").stdout.split()[0]
        torchx("status", pipeline)
        for path in state.rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path
        assert secret not in torchx("log", local).stdout
        torchx("cancel", pipeline)
        # Its driver ends with the pipeline (the cancelled steps end on the server): none is left.
        deadline = time.time() + 60
        while "CANCELLED" not in torchx("status", pipeline).stdout and time.time() < deadline:
            time.sleep(0.2)
        assert "CANCELLED" in torchx("status", pipeline).stdout
    finally:
        server.token = saved


def test_exec_plugins_are_off_by_default(server, pki, tmp_path):
    torchx = make_cli(tmp_path, kubeconfig(server.url, pki, "exec"))
    res = torchx("run", "-s", "kubernetes", "-cfg", "queue=default", "utils.echo", check=False)
    assert res.returncode != 0 and "TORCHX_KUBERNETES_ALLOW_EXEC=1" in res.stderr
    assert not server.requests


def test_kubeconfig_problems_name_the_field(tmp_path, pki):
    res = make_cli(tmp_path, "apiVersion: v1\nkind: Config\n")("list", "-s", "kubernetes", check=False)
    assert res.returncode != 0 and "current-context" in res.stderr
    text = kubeconfig("https://127.0.0.1:1", pki, "cert").replace('"current-context": "fake"',
                                                                  '"current-context": "other"')
    res = make_cli(tmp_path, text)("list", "-s", "kubernetes", check=False)
    assert res.returncode != 0 and "no context `other`" in res.stderr and "fake" in res.stderr
    res = make_cli(tmp_path, kubeconfig("https://127.0.0.1:1", pki, "cert"))("list", "-s", "kubernetes", check=False)
    assert res.returncode != 0 and "cannot be reached" in res.stderr


@pytest.mark.skipif(not os.environ.get("TORCHX_KUBERNETES_TEST_KUBECONFIG"),
                    reason="no real cluster: set TORCHX_KUBERNETES_TEST_KUBECONFIG (and _QUEUE, _IMAGE)")
def test_real_cluster(tmp_path):
    env = dict(os.environ, KUBECONFIG=os.environ["TORCHX_KUBERNETES_TEST_KUBECONFIG"])
    queue = os.environ.get("TORCHX_KUBERNETES_TEST_QUEUE", "default")
    image = os.environ.get("TORCHX_KUBERNETES_TEST_IMAGE", "busybox:latest")

    def run(*args):
        return subprocess.run([BINARY, *args], capture_output=True, text=True, env=env, timeout=900)

    res = run("run", "--wait", "-s", "kubernetes", "-cfg", f"queue={queue}", "utils.echo", "--image", image,
              "--msg", "hello from torchx", "--num_replicas", "2")
    assert res.returncode == 0, res.stderr
    handle = res.stdout.strip().splitlines()[0]
    try:
        assert json.loads(run("status", "--json", handle).stdout)["state"] == "SUCCEEDED"
        assert "hello from torchx" in run("log", f"{handle}/echo/1").stdout
        assert handle.split("/")[-1] in run("list", "-s", "kubernetes").stdout
    finally:
        run("delete", handle)


PLUGIN = '''
from torchx.plugins import register
from torchx.schedulers.kubernetes_scheduler import KubernetesScheduler
from torchx.specs.overlays import set_overlay


class TeamKubernetes(KubernetesScheduler):
    """A plugin author's subclass: an overlay on every role, and in _submit_dryrun a label and an
    env var edited on each task's V1Pod."""

    def _submit_dryrun(self, app, cfg):
        for role in app.roles:
            set_overlay(role, "kubernetes", "V1Pod",
                        {"spec": {"tolerations": [{"key": "team", "operator": "Exists"}]}})
        info = super()._submit_dryrun(app, cfg)
        for task in info.request.resource["spec"]["tasks"]:
            pod = task["template"]
            pod.metadata.labels["team"] = "vision"
            from kubernetes.client.models import V1EnvVar
            pod.spec.containers[0].env.append(V1EnvVar(name="TEAM", value="vision"))
        return info


@register.scheduler()
def team_kubernetes(session_name, **kwargs):
    return TeamKubernetes(session_name)
'''


def test_plugin_subclassing_kubernetes_scheduler_changes_what_is_created(tmp_path, server, pki):
    """A torchx_plugins.schedulers plugin subclassing TorchX's KubernetesScheduler: its overlay and
    its edits of the V1Pods reach the Job the API server receives (held to the schemas), through
    the CLI and through Python; status and cancel of its apps work by handle."""
    plugin_dir = tmp_path / "plugins" / "torchx_plugins" / "schedulers"
    plugin_dir.mkdir(parents=True)
    (plugin_dir / "team_kubernetes.py").write_text(PLUGIN)
    torchx = make_cli(tmp_path, kubeconfig(server.url, pki, "cert"),
                      {"PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path / "plugins"), os.environ.get("PYTHONPATH")]))})

    def created_jobs():
        return [json.loads(r[4]) for r in server.requests if r[0] == "POST" and r[1].endswith("/jobs")]

    res = torchx("run", "-s", "team_kubernetes", "-cfg", "queue=default", "utils.echo", "--msg", "hi", "--num_replicas", "2")
    handle = res.stdout.strip().splitlines()[0]
    assert handle.startswith("team_kubernetes://torchx/default:"), res.stdout
    job = created_jobs()[-1]
    validate_job(job)
    for task in job["spec"]["tasks"]:
        pod = task["template"]
        assert pod["metadata"]["labels"]["team"] == "vision"
        assert pod["metadata"]["labels"]["torchx.pytorch.org/role-name"] == "echo"
        assert {"name": "TEAM", "value": "vision"} in pod["spec"]["containers"][0]["env"]
        assert pod["spec"]["tolerations"] == [{"key": "team", "operator": "Exists"}]
    ns, name = handle.rsplit("/", 1)[1].split(":")
    assert name == job["metadata"]["name"]
    server.set_phase(ns, name, "Running", {"echo-0": "Running", "echo-1": "Running"})
    assert json.loads(torchx("status", "--json", handle).stdout)["state"] == "RUNNING"
    torchx("cancel", handle)
    assert any(r[0] == "POST" and r[1].endswith("/commands") for r in server.requests)

    code = (
        "from torchx.runner import Runner\n"
        "from torchx_plugins.schedulers.team_kubernetes import team_kubernetes\n"
        "r = Runner('torchx', {'team_kubernetes': team_kubernetes})\n"
        "info = r.dryrun_component('utils.echo', ['--msg', 'py'], 'team_kubernetes', cfg={'queue': 'default'})\n"
        "print(info.request.resource['spec']['tasks'][0]['template'].metadata.labels['team'])\n"
        "print(r.schedule(info))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=torchx.env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    label, handle = out.stdout.split()[:2]
    assert label == "vision" and handle.startswith("team_kubernetes://torchx/default:")
    job = created_jobs()[-1]
    validate_job(job)
    assert job["spec"]["tasks"][0]["template"]["metadata"]["labels"]["team"] == "vision"


def test_a_managed_jobs_evicted_pod_is_recovered(server, pki, tmp_path):
    """torchx run --managed on kubernetes: the kubelet evicts the pod (status.reason Evicted) and the
    Job fails; the managed job's driver classifies it as an eviction and creates the Job again."""
    torchx = make_cli(tmp_path, kubeconfig(server.url, pki, "cert"), {"TORCHX_STATE_DIR": str(tmp_path / "state")})
    handle = torchx("run", "--managed", "-s", "kubernetes", "-cfg", "queue=default", "utils.echo").stdout.split()[0]
    assert handle.startswith("managed://")

    def describe():
        return json.loads(torchx("describe", "--json", handle).stdout)

    def wait(what, timeout=60):
        deadline = time.monotonic() + timeout
        while not what(d := describe()):
            assert time.monotonic() < deadline, d
            time.sleep(0.2)
        return d

    try:
        d = wait(lambda d: d["attempts"] and d["attempts"][0].get("handle"))
        ns, name = d["attempts"][0]["handle"].split("/")[-1].split(":")
        server.set_phase(ns, name, "Running", {"echo-0": "Running"})
        server.set_pod_status(ns, f"{name}-echo-0-0", {
            "phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory."})
        server.set_phase(ns, name, "Failed", {"echo-0": "Failed"})
        d = wait(lambda d: len(d["attempts"]) == 2 and d["attempts"][1].get("handle"))
        assert d["attempts"][0]["cause"] == "eviction", d
        assert "Evicted: The node was low on resource: memory." in d["attempts"][0]["reason"], d
        assert d["attempts"][1]["why"] == "recovery 1 after eviction", d
        ns2, name2 = d["attempts"][1]["handle"].split("/")[-1].split(":")
        assert name2 != name
        server.set_phase(ns2, name2, "Completed", {"echo-0": "Succeeded"})
        d = wait(lambda d: d["state"] in ("SUCCEEDED", "FAILED", "CANCELLED"))
        assert d["state"] == "SUCCEEDED" and d["msg"] == "succeeded after 1 recovery", d
    finally:
        torchx("cancel", handle, check=False)


def test_hosts_are_the_nodes_with_the_jobs_pods_and_stacks_say_how(torchx, server):
    """`torchx hosts -s kubernetes`: the Node list with metrics-server's figures and the running
    pods of the namespace's torchx jobs on their nodes. `debug stack` names the `kubectl exec`
    that dumps each running pod (attaching needs the pods/exec stream this client lacks)."""
    handle, ns, name = submit(torchx, "utils.echo", "--msg", "hi", "--num_replicas", "2")
    server.set_phase(ns, name, "Running", {"echo-0": "Running", "echo-1": "Running"})
    [view] = json.loads(torchx("hosts", "-s", "kubernetes", "--json").stdout)
    hosts = {h["name"]: h for h in view["hosts"]}
    assert sorted(hosts) == ["cp-0", "gpu-1", "gpu-2"], view
    assert hosts["cp-0"]["groups"] == ["control-plane"] and hosts["cp-0"]["state"] == "Ready"
    assert hosts["gpu-1"]["cpus"] == 32 and hosts["gpu-1"]["memory_mb"] == 256 * 1024 and hosts["gpu-1"]["gpus"] == 8
    assert hosts["gpu-1"]["cpus_used"] == 3 and hosts["gpu-1"]["memory_used_mb"] == 40 * 1024
    assert hosts["gpu-2"]["cpus_used"] is None  # metrics-server has no figure for it
    pods = {p["metadata"]["name"]: p["spec"]["nodeName"] for (n, _), p in server.pods.items() if n == ns}
    placed = {h: a["where"] for h, v in hosts.items() for a in v["apps"] if a["app_id"] == f"{ns}:{name}"}
    assert placed == {pods[f"{name}-echo-0-0"]: ["echo/0"], pods[f"{name}-echo-1-0"]: ["echo/1"]}, placed
    assert f"    {handle} (echo/0)" in torchx("hosts", "-s", "kubernetes").stdout
    # Without metrics-server: capacity and state, no use.
    server.metrics_api = False
    [view] = json.loads(torchx("hosts", "-s", "kubernetes", "--json").stdout)
    assert all(h["cpus_used"] is None for h in view["hosts"]), view

    dump = json.loads(torchx("debug", "stack", handle, "--json").stdout)
    assert [p["error"].split("run `")[1].split("`")[0] for p in dump["processes"]] == [
        f"kubectl exec -n {ns} {name}-echo-0-0 -- py-spy dump --pid 1",
        f"kubectl exec -n {ns} {name}-echo-1-0 -- py-spy dump --pid 1"]
    res = torchx("debug", "profile", handle, "--role", "echo", "--replica", "1", check=False)
    assert res.returncode == 1 and f"kubectl exec -n {ns} {name}-echo-1-0 -- py-spy record" in res.stderr, res.stderr
