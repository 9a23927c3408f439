"""slurm when its controller or a node fails (ctest label `faults` + `slurm`):
- slurmctld stopped and started again while jobs run. During the outage `status` says so plainly
  (state from accounting), and `run --wait` and `log -t` ride it out; afterwards the jobs end as
  Slurm ends them, their logs whole.
- a node of a running two-node job dies (its slurmd and the job's processes on it frozen, as a
  powered-off machine goes silent). Slurm marks it down and requeues the job; `status` follows
  (PENDING, a restart counted), the job reruns on the nodes left, and a TorchX-style retry
  (`max_retries`) still requeues it after a failure on top of that.

Skips without a cluster unless TORCHX_REQUIRE_ENGINES names slurm. It restarts slurmctld the way
scripts/engines/slurm-up.sh starts it, so it runs alone (RUN_SERIAL)."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from slurm_nodes import node_processes, node_state  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")

if shutil.which("sbatch") is None or subprocess.run(["sinfo"], capture_output=True).returncode != 0:
    if "slurm" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","):
        raise RuntimeError("slurm is required (TORCHX_REQUIRE_ENGINES) but no cluster answers")
    pytest.skip("no Slurm cluster (scripts/engines/slurm-up.sh starts one)", allow_module_level=True)


def cli(*args, cwd, check=True, timeout=120):
    res = subprocess.run([BINARY, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout)
    assert res.returncode in (0, 1, 2), f"torchx {args} crashed: {res.returncode}\n{res.stderr}"
    if check:
        assert res.returncode == 0, f"torchx {' '.join(args)} -> {res.returncode}\n{res.stdout}\n{res.stderr}"
    return res


def status(handle, cwd) -> dict:
    return json.loads(cli("status", "--json", handle, cwd=cwd).stdout)


def controller_up() -> bool:
    return "is UP" in subprocess.run(["scontrol", "ping"], capture_output=True, text=True).stdout


def steps_running() -> int:
    """Job steps (srun) running on the cluster; this suite runs alone, so they are its jobs'."""
    steps = subprocess.run(["squeue", "-h", "-s", "-o", "%i"], capture_output=True, text=True).stdout.split()
    return sum(1 for step in steps if step.split(".")[-1].isdigit())


def test_slurmctld_restarted_under_running_jobs(tmp_path):
    handle = cli("run", "-s", "slurm", "utils.sh", "sh", "-c", "echo up; sleep 20; echo done",
                 cwd=tmp_path).stdout.split()[0]
    waiter = subprocess.Popen([BINARY, "run", "--wait", "-s", "slurm", "utils.sh", "sh", "-c", "sleep 20; echo waited"],
                              cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    follower = subprocess.Popen([BINARY, "log", "-t", handle], cwd=tmp_path, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    try:
        # Both jobs' srun steps under way first: a step created while the controller is down fails
        # (srun cannot reach it), which is Slurm's outcome, not what this test is about.
        deadline = time.monotonic() + 60
        while steps_running() < 2:
            assert time.monotonic() < deadline, subprocess.run(["squeue", "-s"], capture_output=True, text=True).stdout
            time.sleep(0.5)
        # Answers are shared for the refresh interval ([slurm] status_interval, 2 s): the one the
        # follower took while the job waited may answer for up to that long.
        deadline = time.monotonic() + 10
        while (state := status(handle, tmp_path)["state"]) != "RUNNING":
            assert time.monotonic() < deadline, state
            time.sleep(0.5)
        subprocess.run(["pkill", "-x", "slurmctld"], check=True)
        deadline = time.monotonic() + 20
        while controller_up() and time.monotonic() < deadline:
            time.sleep(0.2)
        # From accounting, and says so, once the answer taken before the outage has aged out.
        deadline = time.monotonic() + 10
        while "the Slurm controller cannot be reached" not in (during := status(handle, tmp_path))["msg"]:
            assert time.monotonic() < deadline, during
            time.sleep(0.5)
        # Accounting may lag behind the queue (a fresh cluster's can still say PENDING): the state
        # it gives is a live one, and the message says where it came from.
        assert during["state"] in ("PENDING", "RUNNING"), during
        assert "the Slurm controller cannot be reached" in during["msg"], during
    finally:
        if not controller_up():
            subprocess.run(["/usr/sbin/slurmctld", "-i"], check=True)  # as slurm-up.sh starts it
        deadline = time.monotonic() + 30
        while not controller_up() and time.monotonic() < deadline:
            time.sleep(0.5)
    deadline = time.monotonic() + 180
    while (state := status(handle, tmp_path)["state"]) not in ("SUCCEEDED", "FAILED", "CANCELLED"):
        assert time.monotonic() < deadline, state
        time.sleep(1)
    assert state == "SUCCEEDED"
    assert cli("log", handle, cwd=tmp_path).stdout == "sh/0 up\nsh/0 done\n"
    out, err = waiter.communicate(timeout=240)
    assert waiter.returncode == 0, err  # run --wait rode out the outage
    assert "SUCCEEDED" in err
    out, err = follower.communicate(timeout=60)
    assert follower.returncode == 0, err  # log -t read on through the outage, to the job's end
    assert out == "sh/0 up\nsh/0 done\n", out


TWO_NODE_JOB = r"""
attempt=${SLURM_RESTART_COUNT:-0}
echo "attempt $attempt on $SLURMD_NODENAME"
case $attempt in
  0) sleep 600 ;;   # the node dies under this one
  1) exit 3 ;;      # the app fails: the TorchX-style retry requeues it
  *) echo done ;;
esac
"""


def test_a_node_dies_under_a_two_node_job(tmp_path):
    app = {"name": "twonode", "roles": [{
        "name": "w", "image": str(tmp_path), "entrypoint": "sh", "num_replicas": 2, "max_retries": 2,
        "args": ["-c", TWO_NODE_JOB],
        # Two CPUs fill a node: one replica per node, and a node left for the requeued job.
        "resource": {"cpu": 2, "gpu": 0, "memMB": 256}}]}
    (tmp_path / "twonode.json").write_text(json.dumps(app))
    handle = cli("run", "-s", "slurm", "./twonode.json", cwd=tmp_path).stdout.split()[0]
    job_id = handle.rsplit("/", 1)[1]
    frozen, node = [], None
    try:
        deadline = time.monotonic() + 60
        while True:
            s = status(handle, tmp_path)
            if s["state"] == "RUNNING" and (tmp_path / f"slurm-{job_id}-w-1.out").exists():
                break
            assert time.monotonic() < deadline, s
            time.sleep(0.5)
        # The second replica is the het job's second component; its node dies.
        rows = subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%i %N"], capture_output=True, text=True).stdout
        node = dict(r.split() for r in rows.splitlines())[f"{job_id}+1"]
        frozen = node_processes(node, job_id)
        assert len(frozen) >= 3, frozen  # slurmd, slurmstepd and the replica's shell at least
        for pid in frozen:
            os.kill(pid, 19)  # SIGSTOP: silent, no connection reset, as a machine that lost power
        deadline = time.monotonic() + 120  # SlurmdTimeout=30 in slurm-up.sh
        while not node_state(node).startswith("down"):
            assert time.monotonic() < deadline, node_state(node)
            time.sleep(1)
        # Slurm requeued the job (NODE_FAIL, --requeue): status says it is waiting again, a restart counted.
        deadline = time.monotonic() + 30
        while (s := status(handle, tmp_path))["num_restarts"] < 1:
            assert time.monotonic() < deadline, s
            time.sleep(0.5)
        assert s["state"] in ("PENDING", "RUNNING"), s  # requeued, not failed
    finally:
        for pid in frozen:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        if node and not subprocess.run(["pgrep", "-f", f"slurmd -N {node}$"], capture_output=True).stdout:
            subprocess.run(["/usr/sbin/slurmd", "-N", node], check=True)  # as slurm-up.sh starts it
    deadline = time.monotonic() + 300
    while (s := status(handle, tmp_path))["state"] not in ("SUCCEEDED", "FAILED", "CANCELLED"):
        assert time.monotonic() < deadline, s
        time.sleep(1)
    assert s["state"] == "SUCCEEDED", s
    assert s["num_restarts"] == 2, s  # one requeue by Slurm for the node, one by the TorchX retry
    log = cli("log", handle, cwd=tmp_path).stdout
    for replica in (0, 1):
        mine = [l for l in log.splitlines() if l.startswith(f"w/{replica} attempt")]
        assert [l.split()[2] for l in mine] == ["0", "1", "2"], log  # every attempt's lines kept
    assert f"w/1 attempt 0 on {node}" in log
    # The node comes back to service on its own (ReturnToService=2) once its slurmd is back.
    deadline = time.monotonic() + 60
    while node_state(node) not in ("idle", "mixed", "allocated"):
        assert time.monotonic() < deadline, node_state(node)
        time.sleep(1)
