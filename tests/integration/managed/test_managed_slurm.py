"""Managed jobs on the project's three-node Slurm cluster (scripts/engines/slurm-up.sh), the engine's
own failures made for real: a 2-node DDP training run of a tiny PyTorch model whose node is frozen
(its slurmd and processes stopped, as the fault suite does) once a checkpoint is on disk ends
NODE_FAIL and is submitted again, resuming from the checkpoint; a job preempted by an "urgent"
partition's job is submitted again; a job past its time limit is recovered only when asked; a
script's exit 1 is not recovered; `scancel` ends the run; a drained partition's refusal fails over
to the next target, and with every target refused the run fails naming each one's reason.

Runs alone (RUN_SERIAL): it freezes a node and drains partitions. Skips without a cluster unless
TORCHX_REQUIRE_ENGINES names slurm."""

import os
import re
import shutil
import socket
import subprocess
import sys
import time

import pytest

from conftest import REPO, TRAIN_PY, needs_torch

sys.path.insert(0, str(REPO / "tests" / "support"))
from slurm_nodes import node_processes, node_state  # noqa: E402

if shutil.which("sbatch") is None or subprocess.run(["sinfo"], capture_output=True).returncode != 0:
    if "slurm" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","):
        raise RuntimeError("slurm is required (TORCHX_REQUIRE_ENGINES) but no cluster answers: "
                           "run scripts/engines/slurm-up.sh")
    pytest.skip("no Slurm cluster (scripts/engines/slurm-up.sh starts one)", allow_module_level=True)

ENDED = ("SUCCEEDED", "FAILED", "CANCELLED")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def job_id(handle: str) -> str:
    return handle.rsplit("/", 1)[1]


@pytest.fixture
def restore_partitions():
    yield
    for p in ("standby", "batch"):
        subprocess.run(["scontrol", "update", f"partitionname={p}", "state=up"], capture_output=True)


@needs_torch
def test_two_node_ddp_recovers_from_a_lost_node_and_resumes_from_its_checkpoint(torchx):
    torchx.write("train.py", TRAIN_PY)
    handle = torchx("run", "--managed", "-s", "slurm", "dist.ddp", "-j", "2x1", "--cpu", "2", "--memMB", "1500",
                    "--rdzv_port", str(free_port()), "--script", "train.py", "--", "60", "1").stdout.split()[0]
    ckpt = torchx.cwd / ".torchx" / "checkpoints" / job_id(handle) / "model.pt"
    deadline = time.monotonic() + 240
    while not ckpt.exists():
        assert time.monotonic() < deadline, torchx.describe(handle)
        time.sleep(1)
    d = torchx.describe(handle)
    first = job_id(d["attempts"][0]["handle"])
    rows = subprocess.run(["squeue", "-h", "-j", first, "-o", "%i %N"], capture_output=True, text=True).stdout
    node = dict(r.split() for r in rows.splitlines())[f"{first}+1"]  # the second replica's node
    frozen = node_processes(node, first)
    assert len(frozen) >= 2, frozen
    try:
        for pid in frozen:
            os.kill(pid, 19)  # SIGSTOP: silent, as a machine that lost power
        d = torchx.wait_for(handle, None, timeout=240, what=lambda d: len(d["attempts"]) >= 2)
        assert d["attempts"][0]["cause"] == "node_failure", d
        assert "NODE_FAIL" in d["attempts"][0]["reason"], d
    finally:
        for pid in frozen:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        if not subprocess.run(["pgrep", "-f", f"slurmd -N {node}$"], capture_output=True).stdout:
            subprocess.run(["/usr/sbin/slurmd", "-N", node], check=True)  # as slurm-up.sh starts it
    d = torchx.wait_for(handle, ENDED, timeout=600)
    assert d["state"] == "SUCCEEDED", d
    assert len(d["attempts"]) == 2 and d["attempts"][1]["why"] == "recovery 1 after node_failure", d
    # Both replicas' lines (torchrun's rendezvous, not the replica index, decides the ranks).
    log = torchx("log", f"{handle}/train/0").stdout + torchx("log", f"{handle}/train/1").stdout
    starts = {int(rank): int(step) for rank, step in
              re.findall(r"\[attempt 1\].*rank (\d) attempt 1 starts at step (\d+)", log)}
    assert sorted(starts) == [0, 1], log
    assert len(set(starts.values())) == 1 and starts[0] >= 1, log  # from the checkpoint, not from scratch
    assert len(re.findall(r"\[attempt 1\].*rank \d done at step 60", log)) == 2, log
    deadline = time.monotonic() + 90  # the node returns to service (ReturnToService=2)
    while node_state(node) not in ("idle", "mixed", "allocated"):
        assert time.monotonic() < deadline, node_state(node)
        time.sleep(1)


def test_a_preempted_job_is_submitted_again(torchx):
    script = "echo attempt $TORCHX_RECOVERY_COUNT; sleep 20"
    handle = torchx("run", "--managed", "-s", "slurm", "-cfg", "partition=standby", "utils.sh", "--cpu", "2",
                    "--memMB", "256", "sh", "-c", script).stdout.split()[0]
    torchx.wait_for(handle, ("RUNNING",), timeout=120)
    urgent = subprocess.run(["sbatch", "--parsable", "-p", "urgent", "-N3", "-c2", "--wrap", "sleep 3"],
                            capture_output=True, text=True, check=True, cwd=torchx.cwd).stdout.strip()
    try:
        d = torchx.wait_for(handle, ENDED, timeout=300)
    finally:
        subprocess.run(["scancel", urgent])
    assert d["state"] == "SUCCEEDED", d
    assert d["attempts"][0]["cause"] == "preemption" and "PREEMPTED" in d["attempts"][0]["reason"], d
    assert len(d["attempts"]) == 2, d


def test_time_limit_recovered_only_when_asked_user_error_and_scancel_end_it(torchx):
    # A job past its time limit (1 minute) whose second attempt finishes in time.
    script = "if [ $TORCHX_RECOVERY_COUNT = 0 ]; then sleep 300; fi; echo done"
    handles = {
        "asked": torchx("run", "--managed", "--recover_on", "time_limit", "-s", "slurm", "-cfg", "time=1",
                        "utils.sh", "--memMB", "256", "sh", "-c", script).stdout.split()[0],
        "not asked": torchx("run", "--managed", "-s", "slurm", "-cfg", "time=1", "utils.sh", "--memMB", "256",
                            "sh", "-c", script).stdout.split()[0],
        "exit 1": torchx("run", "--managed", "-s", "slurm", "utils.sh", "--memMB", "256", "sh", "-c",
                         "exit 1").stdout.split()[0],
        "scancel": torchx("run", "--managed", "-s", "slurm", "utils.sh", "--memMB", "256", "sleep",
                          "300").stdout.split()[0],
    }
    d = torchx.wait_for(handles["scancel"], ("RUNNING",), timeout=120)
    subprocess.run(["scancel", job_id(d["attempts"][0]["handle"])], check=True)
    d = torchx.wait_for(handles["scancel"], ENDED, timeout=120)
    assert d["state"] == "CANCELLED" and len(d["attempts"]) == 1, d
    assert "cancelled outside the launcher" in d["msg"], d
    d = torchx.wait_for(handles["exit 1"], ENDED, timeout=120)
    assert d["state"] == "FAILED" and len(d["attempts"]) == 1 and d["attempts"][0]["cause"] == "user_error", d
    d = torchx.wait_for(handles["not asked"], ENDED, timeout=300)
    assert d["state"] == "FAILED" and d["attempts"][0]["cause"] == "time_limit", d
    assert "--recover_on time_limit would" in d["msg"], d
    d = torchx.wait_for(handles["asked"], ENDED, timeout=300)
    assert d["state"] == "SUCCEEDED" and d["attempts"][0]["cause"] == "time_limit", d
    assert len(d["attempts"]) == 2, d


def test_a_drained_partition_fails_over_and_all_refused_fail_naming_each(torchx, restore_partitions):
    subprocess.run(["scontrol", "update", "partitionname=standby", "state=drain"], check=True)
    handle = torchx("run", "--managed", "-s", "slurm", "-cfg", "partition=standby", "--failover",
                    "slurm:partition=debug", "utils.sh", "--memMB", "256", "echo", "ran").stdout.split()[0]
    d = torchx.wait_for(handle, ENDED, timeout=120)
    assert d["state"] == "SUCCEEDED", d
    assert d["attempts"][0]["state"] == "FAILED" and d["attempts"][0]["cause"] == "refused", d
    assert "drain" in d["attempts"][0]["reason"], d
    assert d["attempts"][1]["target"] == "slurm (partition=debug)", d
    assert d["attempts"][1]["why"].startswith("failover from slurm (partition=standby)"), d
    subprocess.run(["scontrol", "update", "partitionname=batch", "state=drain"], check=True)
    handle = torchx("run", "--managed", "-s", "slurm", "-cfg", "partition=standby", "--failover",
                    "slurm:partition=batch", "utils.sh", "--memMB", "256", "echo", "ran").stdout.split()[0]
    d = torchx.wait_for(handle, ENDED, timeout=120)
    assert d["state"] == "FAILED", d
    assert "slurm (partition=standby): refused" in d["msg"] and "slurm (partition=batch): refused" in d["msg"], d


def test_an_attempt_waiting_past_start_timeout_is_cancelled_and_the_next_target_runs_it(torchx):
    # The cluster is full (every CPU of every node taken): the first attempt waits in the queue.
    block = subprocess.run(["sbatch", "--parsable", "-p", "debug", "-N3", "-c2", "--wrap", "sleep 120"],
                           capture_output=True, text=True, check=True, cwd=torchx.cwd).stdout.strip()
    try:
        handle = torchx("run", "--managed", "--start_timeout", "5s", "--failover", "local_cwd", "-s", "slurm",
                        "utils.sh", "--memMB", "256", "echo", "ran").stdout.split()[0]
        d = torchx.wait_for(handle, ENDED, timeout=120)
    finally:
        subprocess.run(["scancel", block])
    assert d["state"] == "SUCCEEDED", d
    first, second = d["attempts"]
    assert first["cause"] == "start_timeout" and first["state"] == "CANCELLED", d
    assert "not started within 5 s" in first["reason"], d
    assert second["target"] == "local_cwd" and second["handle"].startswith("local_cwd://"), d
    assert torchx("log", handle).stdout == "sh/0 [attempt 1] ran\n"
