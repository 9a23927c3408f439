"""The ray scheduler against a live Ray cluster (scripts/engines/ray-up.sh: a head and a worker
node on this host, Ray's Job Submission API on 127.0.0.1:8265), through the CLI and the Python
API as users run them: a 2x2 DDP job of a tiny model over gloo whose replicas land on different
Ray nodes, status while pending and running, a failing replica, cancel and delete, list,
`log -t` following a running job, and a workspace.

Skips when no cluster answers unless TORCHX_REQUIRE_ENGINES names ray."""

import json
import os
import pathlib
import re
import subprocess
import sys
import time
import urllib.request

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "common"))
import hung_rank  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[3]
# The project's test cluster (scripts/engines/ray-env.sh; test.sh exports where it is).
DASHBOARD = os.environ.get("TORCHX_RAY_DASHBOARD", "127.0.0.1:8275")


def ray_up() -> bool:
    try:
        with urllib.request.urlopen(f"http://{DASHBOARD}/api/version", timeout=3) as r:
            return "ray_version" in json.loads(r.read())
    except OSError:
        return False


if not ray_up():
    if "ray" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","):
        raise RuntimeError(f"ray is required (TORCHX_REQUIRE_ENGINES) but no dashboard answers on {DASHBOARD}: "
                           "run scripts/engines/ray-up.sh")
    pytest.skip("no Ray cluster (scripts/engines/ray-up.sh starts one)", allow_module_level=True)

TRAIN = """
import os, torch, torch.distributed as dist
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad(); model(torch.randn(8, 4)).sum().backward(); opt.step()
print(f"rank {rank}/{world} node {os.environ['TORCHX_RAY_NODE_ID']}", flush=True)
dist.destroy_process_group()
"""


@pytest.fixture
def torchx(tmp_path):
    binary = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")
    env = dict(os.environ, RAY_ADDRESS=f"http://{DASHBOARD}")
    handles = []

    def run(*args, check=True, timeout=300):
        res = subprocess.run([binary, *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=timeout)
        if check:
            assert res.returncode == 0, f"torchx {' '.join(args)} -> {res.returncode}\n{res.stdout}\n{res.stderr}"
        if args and args[0] == "run" and res.stdout.startswith("ray://"):
            handles.append(res.stdout.split()[0])
        return res

    run.binary, run.env, run.handles = binary, env, handles
    yield run
    for handle in handles:  # nothing left running, nothing left listed
        subprocess.run([binary, "cancel", handle], capture_output=True, env=env)
        for _ in range(50):
            if subprocess.run([binary, "delete", handle], capture_output=True, env=env).returncode == 0:
                break
            time.sleep(0.2)


def spec(tmp_path, name, roles) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"name": name, "roles": [
        {"image": str(tmp_path), "resource": {"cpu": 1, "gpu": 0, "memMB": 256}, **r} for r in roles]}))
    return f"./{path.name}"


STATES = {2: "PENDING", 3: "RUNNING", 4: "SUCCEEDED", 5: "FAILED", 6: "CANCELLED"}  # status --json: TorchX's ints


def replica_states(s):
    return [STATES.get(r["state"], r["state"]) for r in s["roles"][0]["replicas"]]


def status(torchx, handle):
    return json.loads(torchx("status", "--json", handle).stdout)


def wait_state(torchx, handle, want, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = status(torchx, handle)
        if s["state"] in want:
            return s
        time.sleep(0.5)
    raise AssertionError(f"{handle} never reached {want}: {s}")


def test_ddp_2x2_over_two_nodes(torchx, tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    res = torchx("run", "--wait", "--log", "-s", "ray", "--workspace", str(tmp_path), "dist.ddp", "-j", "2x2",
                 "--script", "train.py", timeout=600)
    handle = res.stdout.split()[0]
    assert handle.startswith(f"ray://torchx/{DASHBOARD}-train-"), res.stdout
    assert "SUCCEEDED" in res.stdout + res.stderr
    # Each replica's lines come back under its own prefix: two ranks each, four in all.
    ranks = {m[2]: (m[1], m[3]) for m in re.finditer(r"^train/(\d) \[\d\]:rank (\d)/4 node (\w+)$", res.stdout, re.M)}
    assert sorted(ranks) == ["0", "1", "2", "3"], res.stdout
    nodes = {replica: node for replica, node in ranks.values()}
    assert len(nodes) == 2 and nodes["0"] != nodes["1"], f"both replicas on one Ray node: {nodes}"
    s = status(torchx, handle)
    assert s["state"] == "SUCCEEDED"
    assert replica_states(s) == ["SUCCEEDED", "SUCCEEDED"]
    assert all(r["hostname"] for r in s["roles"][0]["replicas"]), s
    described = torchx("describe", handle).stdout
    assert "dist.ddp" in described or "torchrun" in described, described  # the submitted AppDef


def test_python_api_ddp(torchx, tmp_path):
    pytest.importorskip("torchx.runner")
    (tmp_path / "train.py").write_text(TRAIN)
    code = (
        "import json\n"
        "from torchx.runner import get_runner\n"
        "r = get_runner()\n"
        f"h = r.run_component('dist.ddp', ['-j', '2x2', '--script', 'train.py'], 'ray', workspace={str(tmp_path)!r})\n"
        "print(h)\n"
        "print(r.wait(h, wait_interval=1).state.name)\n"
        "print(json.dumps([list(r.log_lines(h, 'train', k)) for k in (0, 1)]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=torchx.env,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    handle, state, logs = out.stdout.splitlines()[:3]
    torchx.handles.append(handle)
    assert handle.startswith(f"ray://torchx/{DASHBOARD}-train-")
    # A failed run shows, for each replica, the lines that say why a process died (C++'s
    # `terminate called`, gloo's and c10d's errors: the abort seen intermittently in CI) wherever
    # they are, then its last lines; otherwise the failure is only a state.
    why = re.compile(r"terminate called|what\(\)|[Gg]loo|c10d|Abort|abort|Timeout|timed out|Segmentation")
    shown = [f"--- replica {k}: lines saying why ---\n" + "".join([ln for ln in lines if why.search(ln)][:30]) +
             f"--- replica {k}: last lines ---\n" + "".join(lines[-40:]) for k, lines in enumerate(json.loads(logs))]
    assert state == "SUCCEEDED", "".join(shown)
    # torchrun's rendezvous, not the replica index, assigns the ranks: two per replica, one node each.
    seen = [re.findall(r"rank (\d)/4 node (\w+)", "".join(lines)) for lines in json.loads(logs)]
    assert sorted(r for replica in seen for r, _ in replica) == ["0", "1", "2", "3"], seen
    nodes = [{node for _, node in replica} for replica in seen]
    assert all(len(n) == 1 for n in nodes) and nodes[0] != nodes[1], seen


def test_pending_running_then_cancel_and_delete(torchx, tmp_path):
    # Three 2-CPU replicas may not spread strictly over two 2-CPU nodes: the gang waits for room.
    blocked = torchx("run", "-s", "ray", "-cfg", "placement_strategy=STRICT_SPREAD",
                     spec(tmp_path, "blocked", [{"name": "w", "entrypoint": "sleep", "args": ["60"], "num_replicas": 3,
                                                 "resource": {"cpu": 1, "gpu": 0, "memMB": 256}}])).stdout.split()[0]
    s = wait_state(torchx, blocked, {"PENDING"}, timeout=60)
    time.sleep(3)
    assert status(torchx, blocked)["state"] == "PENDING"
    torchx("cancel", blocked)
    assert wait_state(torchx, blocked, {"CANCELLED"}, timeout=60)["state"] == "CANCELLED"

    handle = torchx("run", "-s", "ray", spec(tmp_path, "sleeper", [
        {"name": "w", "entrypoint": "sleep", "args": ["120"], "num_replicas": 2}])).stdout.split()[0]
    s = wait_state(torchx, handle, {"RUNNING"}, timeout=90)
    assert replica_states(s) == ["RUNNING", "RUNNING"]
    listed = torchx("list", "-s", "ray", "--json").stdout
    assert handle in listed and blocked in listed
    refused = torchx("delete", handle, check=False)
    assert refused.returncode != 0 and "terminal" in refused.stderr, refused.stderr
    t0 = time.monotonic()
    torchx("cancel", handle)
    assert wait_state(torchx, handle, {"CANCELLED"}, timeout=60)["state"] == "CANCELLED"
    assert time.monotonic() - t0 < 30
    torchx("delete", handle)
    assert handle not in torchx("list", "-s", "ray", "--json").stdout
    gone = torchx("status", handle, check=False)
    assert gone.returncode != 0


def test_failing_replica_fails_the_app_with_its_exit_code_and_stderr(torchx, tmp_path):
    script = "import sys, time; r = int(sys.argv[1]); time.sleep(1)\nif r == 1: print('boom on', r, file=sys.stderr); sys.exit(3)\ntime.sleep(60)"
    res = torchx("run", "--wait", "-s", "ray", spec(tmp_path, "failing", [
        {"name": "w", "entrypoint": "python3", "args": ["-c", script, "${replica_id}"], "num_replicas": 2}]),
                 check=False, timeout=300)
    handle = res.stdout.split()[0]
    s = status(torchx, handle)
    assert s["state"] == "FAILED", s
    assert "w/1 exited with code 3" in s["msg"] and "boom on 1" in s["msg"], s["msg"]
    assert replica_states(s)[1] == "FAILED"
    err = torchx("log", "--streams", "stderr", f"{handle}/w/1").stdout
    assert "boom on 1" in err


def test_log_tail_follows_a_running_job(torchx, tmp_path):
    script = "import time\nfor i in range(6):\n    print('tick', i, flush=True); time.sleep(1)"
    handle = torchx("run", "-s", "ray", spec(tmp_path, "ticker", [
        {"name": "t", "entrypoint": "python3", "args": ["-c", script]}])).stdout.split()[0]
    wait_state(torchx, handle, {"RUNNING"}, timeout=90)
    proc = subprocess.Popen([torchx.binary, "log", "-t", f"{handle}/t/0"], stdout=subprocess.PIPE, text=True,
                            env=torchx.env)
    first = proc.stdout.readline()
    assert first.startswith("t/0 tick"), first
    assert status(torchx, handle)["state"] == "RUNNING"  # a line came while the job still ran
    rest, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert "t/0 tick 5" in first + rest
    assert status(torchx, handle)["state"] == "SUCCEEDED"


def test_workspace_file_reaches_the_replica(torchx, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data.txt").write_text("from the workspace\n")
    (ws / ".torchxignore").write_text("secret.txt\n")
    (ws / "secret.txt").write_text("must not travel\n")
    res = torchx("run", "--wait", "--log", "-s", "ray", "--workspace", str(ws), "utils.sh", "sh", "-c",
                 "cat data.txt; ls secret.txt 2>&1 || true", timeout=300)
    assert "from the workspace" in res.stdout
    assert "must not travel" not in res.stdout and "No such file" in res.stdout



def test_debug_stack_and_hosts_on_the_cluster(torchx, tmp_path):
    """`torchx debug stack` asks each replica's node agent for its stack (the dashboard's own
    Stack Trace: py-spy there, by the pid the gang driver reported): rank 0 waits in all_reduce,
    rank 1 spins in stuck_here. `torchx hosts -s ray` lists the cluster's two nodes with the job's
    replicas on them; `debug profile` samples one replica through the agent too."""
    hung_rank.put_script(tmp_path)
    res = torchx("run", "-s", "ray", "--workspace", str(tmp_path), "dist.ddp", "-j", "2x1", "--script", "hang.py",
                 timeout=600)
    handle = res.stdout.split()[0]
    wait_state(torchx, handle, {"RUNNING"}, timeout=300)
    dump, groups = hung_rank.wait_for_the_hang(torchx, handle)
    stuck = dump["processes"][groups["stuck_here"]["members"][0]]
    assert stuck["role"] == "hang" and stuck["host"], stuck
    text = torchx("debug", "stack", handle).stdout
    assert "1 process in stuck_here (hang.py:" in text, text

    [view] = json.loads(torchx("hosts", "-s", "ray", "--json").stdout)
    hosts = view["hosts"]
    assert len(hosts) == 2 and all(h["state"] == "ALIVE" and h["cpus"] == 2 for h in hosts), hosts
    assert sum("head" in h["groups"] for h in hosts) == 1, hosts
    placed = sorted(w for h in hosts for a in h["apps"] if a["handle"] == handle for w in a["where"])
    assert placed == ["hang/0", "hang/1"], hosts

    out = tmp_path / "hang.speedscope.json"
    torchx("debug", "profile", handle, "--role", "hang", "--replica", str(stuck["replica_id"]), "--duration", "2",
           "-o", str(out), timeout=180)
    frames = {f["name"] for f in json.loads(out.read_text())["shared"]["frames"]}
    assert "stuck_here" in frames, sorted(frames)[:50]
