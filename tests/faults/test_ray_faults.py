"""ray when its cluster fails (ctest labels faults + ray; runs alone): a worker node killed under a
running gang, and the Ray head restarted under a running job. Each is reported plainly and ends in
a state within 5 minutes, never a hang:

- a node lost under a gang with no retries left: the app is FAILED, the replica "lost its Ray node",
  and its failure cause is node_failure; with a retry (retry_policy APPLICATION), the gang starts
  again on the nodes that are left and SUCCEEDS, with one restart;
- the head restarted: while the dashboard is down every call is an error naming it (kUnavailable);
  afterwards Ray (without GCS fault tolerance) has forgotten the job, and the app is FAILED with
  the reason (the cluster restarted), not "not found".

The cluster is put back with scripts/engines/ray-up.sh. Skips when no cluster answers unless
TORCHX_REQUIRE_ENGINES names ray."""

import json
import os
import pathlib
import re
import signal
import subprocess
import time
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")
# The project's test cluster (scripts/engines/ray-env.sh; test.sh exports where it is).
DASHBOARD = os.environ.get("TORCHX_RAY_DASHBOARD", "127.0.0.1:8275")
GCS = os.environ.get("TORCHX_RAY_GCS", "127.0.0.1:6390")
ENV = dict(os.environ, RAY_ADDRESS=f"http://{DASHBOARD}")
STATES = {2: "PENDING", 3: "RUNNING", 4: "SUCCEEDED", 5: "FAILED", 6: "CANCELLED"}


def ray_up() -> bool:
    try:
        with urllib.request.urlopen(f"http://{DASHBOARD}/api/version", timeout=3):
            return True
    except OSError as e:
        if "ray" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","):
            raise RuntimeError(f"ray is required (TORCHX_REQUIRE_ENGINES) but nothing answers on {DASHBOARD}") from e
        return False


pytestmark = pytest.mark.skipif(not ray_up(), reason="no Ray cluster (scripts/engines/ray-up.sh)")


def cli(*args, cwd, check=True, timeout=120):
    res = subprocess.run([BINARY, *args], capture_output=True, text=True, cwd=cwd, env=ENV, timeout=timeout)
    if check:
        assert res.returncode == 0, f"torchx {' '.join(args)} -> {res.returncode}\n{res.stdout}\n{res.stderr}"
    return res


def spec(tmp_path, name, role) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"name": name, "roles": [
        {"name": "w", "image": str(tmp_path), "resource": {"cpu": 1, "gpu": 0, "memMB": 256}, **role}]}))
    return f"./{path.name}"


def status(handle, cwd):
    return json.loads(cli("status", "--json", handle, cwd=cwd).stdout)


def wait_for(handle, cwd, want, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = status(handle, cwd)
        if STATES.get(s["state"], s["state"]) in want:
            return s
        time.sleep(1)
    raise AssertionError(f"{handle} not {want} within {timeout} s: {s}")


def placement(handle, cwd):
    native = cli("describe", "--native", handle, cwd=cwd).stdout
    return {int(line.split(":")[0].split("/")[1]): line.split("node ")[1].split()[0]
            for line in native.splitlines() if line.startswith("  w/")}


def kill_node(node_id):
    """SIGKILLs the raylet of a Ray node (and so the node: its workers exit with it)."""
    pids = []
    for proc in pathlib.Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"raylet/raylet") and f"--node_id={node_id}".encode() in argv:
            pids.append(int(proc.name))
    assert pids, f"no raylet for node {node_id}"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)


def head_node_id():
    with urllib.request.urlopen(f"http://{DASHBOARD}/api/jobs/", timeout=10) as r:
        for job in json.loads(r.read()):
            if job.get("driver_node_id"):
                return job["driver_node_id"]
    return None


VENV_PYTHON = "/var/cache/engines/ray-venv/bin/python3"


def alive_nodes() -> int:
    code = ("import logging, ray; ray.init(address='" + GCS + "', logging_level=logging.ERROR, log_to_driver=False);"
            "print('alive_nodes=%d' % sum(1 for n in ray.nodes() if n['Alive']))")
    res = subprocess.run([VENV_PYTHON, "-c", code], capture_output=True, text=True, timeout=120)
    # Ray pushes the GCS's error messages (a node marked dead, say) to a driver's stdout, so the
    # count is read from its marked line rather than from the whole output.
    found = re.search(r"^alive_nodes=(\d+)$", res.stdout, re.MULTILINE)
    return int(found.group(1)) if found else 0


@pytest.fixture
def cluster():
    killed = []
    yield killed
    # Ray notices a killed node only after its health checks fail: wait for that, then start it again.
    deadline = time.monotonic() + 120
    while killed and time.monotonic() < deadline and alive_nodes() > 1:
        time.sleep(2)
    subprocess.run(["bash", str(REPO / "scripts/engines/ray-up.sh")], check=True, timeout=600)


def test_worker_node_lost_under_a_gang(tmp_path, cluster):
    # One replica on each node; the one on the worker loses its node.
    handle = cli("run", "-s", "ray", "-cfg", "placement_strategy=STRICT_SPREAD,reschedule_timeout=30",
                 spec(tmp_path, "lost", {"entrypoint": "sleep", "args": ["600"], "num_replicas": 2}),
                 cwd=tmp_path).stdout.split()[0]
    wait_for(handle, tmp_path, {"RUNNING"}, 120)
    where = placement(handle, tmp_path)
    head = head_node_id()
    victim = next(i for i, node in where.items() if node != head)
    t0 = time.monotonic()
    kill_node(where[victim])
    cluster.append(where[victim])
    s = wait_for(handle, tmp_path, {"FAILED", "SUCCEEDED", "CANCELLED"}, 300)
    assert STATES.get(s["state"], s["state"]) == "FAILED", s
    assert f"w/{victim} lost its Ray node" in s["msg"], s["msg"]
    assert time.monotonic() - t0 < 300
    cli("delete", handle, cwd=tmp_path, check=False)


def test_worker_node_lost_then_the_gang_restarts(tmp_path, cluster):
    subprocess.run(["bash", str(REPO / "scripts/engines/ray-up.sh")], check=True, timeout=600)
    # Both replicas fit on either node (1 CPU each, 2 per node): after the loss the gang starts again
    # on the head. The replicas run until a marker exists (this host's path): the restarted ones end.
    marker = tmp_path / "restarted"
    handle = cli("run", "-s", "ray", "-cfg", "reschedule_timeout=120",
                 spec(tmp_path, "again", {"entrypoint": "sh", "args": ["-c", f"[ -e {marker} ] || sleep 600"],
                                          "num_replicas": 2, "max_retries": 1}),
                 cwd=tmp_path).stdout.split()[0]
    wait_for(handle, tmp_path, {"RUNNING"}, 120)
    where = placement(handle, tmp_path)
    head = head_node_id()
    victims = {node for node in where.values() if node != head}
    if not victims:
        pytest.skip(f"SPREAD put both replicas on the head ({where})")
    marker.write_text("")
    for node in victims:
        kill_node(node)
        cluster.append(node)
    s = wait_for(handle, tmp_path, {"FAILED", "SUCCEEDED", "CANCELLED"}, 300)
    assert STATES.get(s["state"], s["state"]) == "SUCCEEDED", s
    assert s["num_restarts"] == 1, s
    cli("delete", handle, cwd=tmp_path, check=False)


def test_head_restarted_under_a_running_job(tmp_path, cluster):
    handle = cli("run", "-s", "ray", spec(tmp_path, "headless", {"entrypoint": "sleep", "args": ["600"]}),
                 cwd=tmp_path).stdout.split()[0]
    wait_for(handle, tmp_path, {"RUNNING"}, 120)
    subprocess.run(["bash", str(REPO / "scripts/engines/ray-down.sh")], check=True, timeout=120)
    down = cli("status", handle, cwd=tmp_path, check=False)
    assert down.returncode != 0
    assert f"the dashboard at http://{DASHBOARD}" in down.stderr, down.stderr
    subprocess.run(["bash", str(REPO / "scripts/engines/ray-up.sh")], check=True, timeout=600)
    s = status(handle, tmp_path)
    assert STATES.get(s["state"], s["state"]) == "FAILED", s
    assert "no longer knows" in s["msg"] and "restarted" in s["msg"], s["msg"]
    cli("delete", handle, cwd=tmp_path)
    assert cli("status", handle, cwd=tmp_path, check=False).returncode != 0
