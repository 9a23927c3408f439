"""The slurm scheduler against a real Slurm cluster (scripts/engines/slurm-up.sh: three nodes on
this host), through the CLI as users run it: the flow of TorchX's own Slurm integration test
(`dist.ddp -j 2x1 --wait --log`, two hello-world lines), echo, retries, cancel, status,
describe, list, logs, and hostile arguments arriving byte-identical.

Skips without sbatch unless TORCHX_REQUIRE_ENGINES names slurm."""

import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "common"))
import hung_rank  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[3]
HERE = pathlib.Path(__file__).resolve().parent

if shutil.which("sbatch") is None or subprocess.run(["sinfo"], capture_output=True).returncode != 0:
    if "slurm" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","):
        raise RuntimeError("slurm is required (TORCHX_REQUIRE_ENGINES) but no cluster answers: "
                           "run scripts/engines/slurm-up.sh")
    pytest.skip("no Slurm cluster (scripts/engines/slurm-up.sh starts one)", allow_module_level=True)


@pytest.fixture
def torchx(tmp_path):
    binary = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")
    jobs = []

    def run(*args, check=True, timeout=300):
        res = subprocess.run([binary, *args], capture_output=True, text=True, cwd=tmp_path, timeout=timeout)
        if check:
            assert res.returncode == 0, f"torchx {' '.join(args)} -> {res.returncode}\n{res.stdout}\n{res.stderr}"
        if args and args[0] == "run" and res.stdout.startswith("slurm://"):
            jobs.append(res.stdout.split()[0])
        return res

    yield run
    for handle in jobs:  # leave nothing queued or running
        subprocess.run([binary, "cancel", handle], capture_output=True, cwd=tmp_path)


def handle_of(res):
    h = res.stdout.strip().splitlines()[0]
    assert h.startswith("slurm://torchx/"), res.stdout
    return h


def wait_state(torchx, handle, want, timeout=120):
    deadline = time.monotonic() + timeout
    state = None
    while time.monotonic() < deadline:
        state = json.loads(torchx("status", "--json", handle).stdout)["state"]
        if state in want:
            return state
        time.sleep(0.5)
    raise AssertionError(f"{handle} still {state}, wanted {want}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_echo_wait_log_status_describe_list(torchx):
    res = torchx("run", "--wait", "--log", "-s", "slurm", "utils.echo", "--msg", "hello slurm")
    handle = handle_of(res)
    assert "echo/0 hello slurm" in res.stdout
    status = json.loads(torchx("status", "--json", handle).stdout)
    assert status["state"] == "SUCCEEDED"
    assert status["roles"][0]["replicas"][0]["hostname"].startswith("node")
    assert "name: echo" in torchx("describe", handle).stdout
    assert handle in torchx("list", "-s", "slurm").stdout
    assert torchx("log", handle).stdout == "echo/0 hello slurm\n"


def test_ddp_2x1_across_two_nodes(torchx, tmp_path):
    shutil.copy(HERE / "hello_world.py", tmp_path / "hello_world.py")
    res = torchx("run", "--wait", "--log", "-s", "slurm", "dist.ddp", "-j", "2x1", "--cpu", "1", "--memMB", "1500",
                 "--max_retries", "1", "--rdzv_port", str(free_port()), "--script", "hello_world.py", timeout=600)
    handle = handle_of(res)
    hello = [line for line in res.stdout.splitlines() if "hello world" in line]
    assert len(hello) == 2, res.stdout + res.stderr
    assert {h.split("rank=")[1].split()[0] for h in hello} == {"0", "1"}
    assert all("world=2 sum=2" in h for h in hello)
    # torchrun prefixes each chunk it reads, so print()'s separate newline write can end up after a
    # stray "[0]:" prefix ("... node=node2[0]:"): read the node name, not the rest of the line.
    nodes = {re.search(r"node=(node\d+)", h).group(1) for h in hello}
    assert len(nodes) == 2 and nodes <= {"node1", "node2", "node3"}, hello  # one rank on each of two nodes
    assert json.loads(torchx("status", "--json", handle).stdout)["state"] == "SUCCEEDED"


def test_failing_job_is_retried_then_fails(torchx, tmp_path):
    app = {"name": "flaky", "roles": [{
        "name": "flaky", "image": str(tmp_path), "entrypoint": "sh",
        "args": ["-c", "echo attempt ${SLURM_RESTART_COUNT:-0}; exit 3"], "max_retries": 1,
        "resource": {"cpu": 1, "gpu": 0, "memMB": 256}}]}
    (tmp_path / "flaky.json").write_text(json.dumps(app))
    handle = handle_of(torchx("run", "-s", "slurm", "./flaky.json"))
    wait_state(torchx, handle, {"FAILED"}, timeout=180)
    status = json.loads(torchx("status", "--json", handle).stdout)
    assert status["num_restarts"] == 1
    assert status["msg"] == "flaky-0 exited with code 3"


def test_cancel_a_running_job(torchx):
    handle = handle_of(torchx("run", "-s", "slurm", "utils.sh", "sleep", "300"))
    wait_state(torchx, handle, {"RUNNING"})
    # The job as slurmctld holds it (describe_native): scontrol's fields and the batch script.
    native = json.loads(torchx("describe", "--native", "--json", handle).stdout)
    assert native["job"]["JobId"] == handle.rsplit("/", 1)[1] and native["job"]["JobState"] == "RUNNING"
    assert native["job"]["NodeList"].startswith("node")
    assert native["batch_script"].startswith("#!") and "sleep" in native["batch_script"]
    assert "JobState=RUNNING" in torchx("describe", "--native", handle).stdout
    torchx("cancel", handle)
    assert wait_state(torchx, handle, {"CANCELLED"}) == "CANCELLED"


def test_resources_are_sstats_figures_for_each_replica(torchx, tmp_path):
    # Two replicas (two het components, one step each), each busy on a core and holding ~60 MiB.
    busy = "import time\nx = bytearray(60 << 20)\nt = time.time()\nwhile time.time() - t < 60: pass\n"
    app = {"name": "busy", "roles": [{
        "name": "busy", "image": str(tmp_path), "entrypoint": sys.executable, "args": ["-c", busy],
        "num_replicas": 2, "resource": {"cpu": 1, "gpu": 0, "memMB": 256}}]}
    (tmp_path / "busy.json").write_text(json.dumps(app))
    handle = handle_of(torchx("run", "-s", "slurm", "./busy.json"))
    wait_state(torchx, handle, {"RUNNING"})
    deadline = time.monotonic() + 60
    while True:  # slurmd gathers every 2 s (JobAcctGatherFrequency in slurm-up.sh)
        res = json.loads(torchx("status", "--resources", "--json", handle).stdout)["resources"]
        samples = [r["samples"][-1] if r["samples"] else {} for r in res["replicas"]]
        if all((s.get("cpu_percent") or 0) > 10 and (s.get("rss_bytes") or 0) > 50 << 20 for s in samples):
            break
        assert time.monotonic() < deadline, res
        time.sleep(1)
    assert [(r["role"], r["replica_id"]) for r in res["replicas"]] == [("busy", 0), ("busy", 1)]
    assert all(r["host"].startswith("node") for r in res["replicas"])
    assert "sstat" in res["note"] and "no GPU figures" in res["gpu_note"]
    table = torchx("status", "--resources", handle).stdout
    assert re.search(r"busy/1 +node\d", table), table
    torchx("cancel", handle)
    wait_state(torchx, handle, {"CANCELLED"})
    ended = json.loads(torchx("status", "--resources", "--json", handle).stdout)["resources"]
    assert "the job is CANCELLED" in ended["note"] and all(not r["samples"] for r in ended["replicas"])


def test_hostile_arguments_arrive_byte_identical(torchx):
    hostile = ["it's", 'say "hi"', "$(touch /tmp/pwned)", "`id`", "*", "a b\tc", "new\nline", "${app_id}x", "-", "--x=1,2"]
    code = "import json, sys; print(json.dumps(sys.argv[1:]))"
    res = torchx("run", "--wait", "--log", "-s", "slurm", "utils.python", "-c", code, "--", *hostile)
    line = [l for l in res.stdout.splitlines() if l.startswith("python/0 [")][0]
    got = json.loads(line[len("python/0 "):])
    handle = handle_of(res)
    job_id = handle.rsplit("/", 1)[1]
    assert got == [a.replace("${app_id}", job_id) for a in hostile]
    assert not os.path.exists("/tmp/pwned")


def test_job_dir_copies_the_workspace_and_finds_logs(torchx, tmp_path):
    (tmp_path / "keep.txt").write_text("kept\n")
    (tmp_path / "skip.log").write_text("ignored\n")
    (tmp_path / ".torchxignore").write_text("*.log\n")
    job_dir = tmp_path / "jobs" / "run1"
    res = torchx("run", "--wait", "--log", "-s", "slurm", "-cfg", f"job_dir={job_dir}", "utils.sh", "cat", "keep.txt")
    handle = handle_of(res)
    assert "sh/0 kept" in res.stdout
    assert (job_dir / "keep.txt").exists() and not (job_dir / "skip.log").exists()
    assert not (job_dir / "jobs" / "run1").exists()  # job_dir inside the workspace is not copied into itself
    assert f"{handle.rsplit('/', 1)[1]} = {job_dir}" in (tmp_path / ".torchxslurmjobdirs").read_text()
    again = torchx("run", "-s", "slurm", "-cfg", f"job_dir={job_dir}", "utils.sh", "true", check=False)
    assert again.returncode != 0 and "already exists" in again.stderr


PLUGIN = '''
import uuid
from torchx.plugins import register
from torchx.schedulers.slurm_scheduler import SlurmScheduler


class TaggedSlurm(SlurmScheduler):
    """A plugin author's subclass: every job carries a comment of its own (an sbatch option)."""

    def _submit_dryrun(self, app, cfg):
        info = super()._submit_dryrun(app, cfg)
        info.request.cmd.append("--comment=tagged-by-plugin")
        for replica in info.request.replicas.values():
            replica.sbatch_opts.append("--nice=7")
        return info


@register.scheduler()
def tagged_slurm(session_name, **kwargs):
    return TaggedSlurm(session_name)
'''


def test_plugin_subclassing_slurm_scheduler_changes_what_runs(tmp_path):
    """A torchx_plugins.schedulers plugin subclassing TorchX's SlurmScheduler and overriding
    _submit_dryrun: its sbatch options reach the real job, through the CLI and through Python."""
    plugin_dir = tmp_path / "plugins" / "torchx_plugins" / "schedulers"
    plugin_dir.mkdir(parents=True)
    (plugin_dir / "tagged_slurm.py").write_text(PLUGIN)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path / "plugins"), os.environ.get("PYTHONPATH")])))
    binary = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")

    def job_fields(job_id):
        out = subprocess.run(["scontrol", "show", "job", job_id], capture_output=True, text=True).stdout
        return out

    res = subprocess.run([binary, "run", "--wait", "-s", "tagged_slurm", "utils.echo", "--msg", "tagged"],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    handle = res.stdout.strip().splitlines()[0]
    assert handle.startswith("tagged_slurm://torchx/")
    job_id = handle.rsplit("/", 1)[1]
    fields = job_fields(job_id)
    assert "Comment=tagged-by-plugin" in fields and "Nice=7" in fields, fields
    status = subprocess.run([binary, "status", handle], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert "SUCCEEDED" in status.stdout, status.stderr

    code = (
        "from torchx.runner import get_runner\n"
        "r = get_runner()\n"
        "h = r.run_component('utils.echo', ['--msg', 'from python'], 'tagged_slurm')\n"
        "print(h)\n"
        "print(r.wait(h, wait_interval=0.5).state.name)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    handle, state = out.stdout.split()[:2]
    assert state == "SUCCEEDED"
    assert "Comment=tagged-by-plugin" in job_fields(handle.rsplit("/", 1)[1])



def test_debug_stack_and_hosts_find_a_hung_rank_on_its_node(torchx, tmp_path):
    """`torchx debug stack` reaches each replica's node with `srun --overlap` into the job: rank 0
    waits in all_reduce on one node while rank 1 spins in stuck_here on another; `torchx hosts`
    lists the three nodes with the job on two; `debug profile` samples one replica there."""
    hung_rank.put_script(tmp_path)
    res = torchx("run", "-s", "slurm", "dist.ddp", "-j", "2x1", "--cpu", "1", "--memMB", "1000",
                 "--rdzv_port", str(free_port()), "--script", "hang.py")
    handle = handle_of(res)
    wait_state(torchx, handle, {"RUNNING"}, timeout=180)
    dump, groups = hung_rank.wait_for_the_hang(torchx, handle)
    stuck = dump["processes"][groups["stuck_here"]["members"][0]]
    waiting = dump["processes"][groups["all_reduce"]["members"][0]]
    assert stuck["rank"] == 1 and waiting["rank"] == 0, dump
    assert stuck["role"] == "hang" and {stuck["replica_id"], waiting["replica_id"]} == {0, 1}, dump
    assert stuck["host"].startswith("node") and waiting["host"].startswith("node"), dump
    assert stuck["host"] != waiting["host"], "both replicas on one node"
    # Only the job's processes: nothing of the dump's own step (no torchx-stacks, no py-spy).
    assert not any("torchx-stacks" in p["command"] or "py-spy" in p["command"] for p in dump["processes"]), dump
    text = torchx("debug", "stack", handle).stdout
    assert "1 process in stuck_here (hang.py:" in text and " rank 1 on node" in text, text

    hosts = json.loads(torchx("hosts", "-s", "slurm", "--json").stdout)[0]["hosts"]
    assert sorted(h["name"] for h in hosts) == ["node1", "node2", "node3"], hosts
    assert all(h["cpus"] == 2 and h["memory_mb"] > 0 and "debug" in h["groups"] for h in hosts), hosts
    job_id = handle.rsplit("/", 1)[1]
    on = {h["name"]: a["where"] for h in hosts for a in h["apps"] if a["app_id"] == job_id}
    assert sorted(on.values()) == [["hang/0"], ["hang/1"]] and set(on) == {stuck["host"], waiting["host"]}, hosts
    assert all(h["cpus_allocated"] >= 1 for h in hosts if h["name"] in on), hosts

    out = tmp_path / "hang.speedscope.json"
    res = torchx("debug", "profile", handle, "--role", "hang", "--replica", str(stuck["replica_id"]),
                 "--duration", "2", "-o", str(out), timeout=180)
    assert res.stdout.strip() == str(out)
    frames = {f["name"] for f in json.loads(out.read_text())["shared"]["frames"]}
    assert "stuck_here" in frames, sorted(frames)[:50]
    torchx("cancel", handle)
    wait_state(torchx, handle, {"CANCELLED"})
    res = torchx("debug", "stack", handle, check=False)
    assert res.returncode == 1 and "has ended (CANCELLED)" in res.stderr, res.stderr
