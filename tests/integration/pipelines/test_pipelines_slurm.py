"""Pipelines on the project's three-node Slurm cluster (scripts/engines/slurm-up.sh): the whole
DAG submitted at once with sbatch --dependency=afterok, prepare -> dist.ddp -j 2x1 across two
nodes -> evaluate passing files; a failing middle step's dependent cancelled by Slurm itself
(never run) and the pipeline FAILED; cancel of a running pipeline cancelling every job.

Skips without a cluster unless TORCHX_REQUIRE_ENGINES names slurm."""

import os
import shutil
import subprocess
import time

import pytest

from conftest import TRAIN_PY, free_port

if shutil.which("sbatch") is None or subprocess.run(["sinfo"], capture_output=True).returncode != 0:
    if "slurm" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","):
        raise RuntimeError("slurm is required (TORCHX_REQUIRE_ENGINES) but no cluster answers: "
                           "run scripts/engines/slurm-up.sh")
    pytest.skip("no Slurm cluster (scripts/engines/slurm-up.sh starts one)", allow_module_level=True)

SUCCEEDED, CANCELLED = 4, 6


def step_handles(status: dict) -> dict:
    """step -> its Slurm handle, from the pipeline's status line."""
    out = {}
    for part in status["msg"].split("; "):
        words = part.split()
        for w in words:
            if w.strip("():").startswith("slurm://"):
                out[words[0].lstrip("(")] = w.strip("():")
    return out


def squeue(job_id: str) -> str:
    return subprocess.run(["squeue", "-h", "-j", job_id, "-O", "State,Reason:40,Dependency:60"],
                          capture_output=True, text=True).stdout


def test_three_steps_on_slurm_pass_files_with_afterok(torchx):
    torchx.write("train.py", TRAIN_PY)
    torchx.write("flow.yaml", f"""
name: slurmflow
scheduler: slurm
steps:
  prepare:
    component: utils.sh
    args: [sh, -c, "sleep 2; echo tokens > data.txt"]
  train:
    component: dist.ddp
    args: [-j, 2x1, --cpu, 1, --memMB, 1500, --rdzv_port, {free_port()}, --script, train.py]
    depends_on: prepare
  evaluate:
    component: utils.sh
    args: [sh, -c, "cat model.txt"]
    depends_on: [train]
""")
    handle = torchx("pipeline", "run", "flow.yaml").stdout.split()[0]
    # Every step is in Slurm's queue at once, each held by its dependency.
    jobs = step_handles(torchx.status(handle))
    assert set(jobs) == {"prepare", "train", "evaluate"}, jobs
    train_id = jobs["train"].rsplit("/", 1)[1]
    evaluate_id = jobs["evaluate"].rsplit("/", 1)[1]
    assert f"afterok:{jobs['prepare'].rsplit('/', 1)[1]}" in squeue(train_id)
    assert f"afterok:{train_id}" in squeue(evaluate_id)
    status = torchx.wait_state(handle, {"SUCCEEDED", "FAILED", "CANCELLED"}, timeout=600)
    assert status["state"] == "SUCCEEDED", status
    assert torchx.roles(handle) == {"prepare": [SUCCEEDED], "train": [SUCCEEDED, SUCCEEDED],
                                    "evaluate": [SUCCEEDED]}
    assert torchx("log", f"{handle}/evaluate").stdout == "evaluate/0 model of tokens world=2 sum=2\n"
    assert handle in torchx("list", "-s", "pipeline").stdout


def test_a_failing_middle_step_on_slurm_cancels_the_last(torchx):
    torchx.write("flow.yaml", """
scheduler: slurm
steps:
  prepare: {component: utils.sh, args: [sh, -c, "echo ok > data.txt"]}
  train: {component: utils.sh, args: [sh, -c, "exit 3"], depends_on: prepare}
  evaluate: {component: utils.sh, args: [sh, -c, "touch evaluated"], depends_on: train}
""")
    res = torchx("pipeline", "run", "--wait", "flow.yaml", check=False, timeout=300)
    assert res.returncode == 1, res.stdout + res.stderr
    handle = res.stdout.split()[0]
    status = torchx.status(handle)
    assert status["state"] == "FAILED"
    assert "evaluate not run: step `train` FAILED" in status["msg"], status
    assert torchx.roles(handle)["evaluate"] == [CANCELLED]
    evaluate_id = step_handles(status)["evaluate"].rsplit("/", 1)[1]
    sacct = subprocess.run(["sacct", "-n", "-X", "-j", evaluate_id, "-o", "State"], capture_output=True, text=True)
    assert "CANCELLED" in sacct.stdout  # Slurm cancelled it: DependencyNeverSatisfied
    assert (torchx.cwd / "data.txt").exists() and not (torchx.cwd / "evaluated").exists()


def test_cancel_on_slurm_cancels_every_job(torchx):
    torchx.write("flow.yaml", """
scheduler: slurm
steps:
  first: {component: utils.sh, args: [sleep, "300"]}
  second: {component: utils.sh, args: [touch, second-ran], depends_on: first}
""")
    handle = torchx("pipeline", "run", "flow.yaml").stdout.split()[0]
    jobs = step_handles(torchx.wait_state(handle, {"RUNNING"}, timeout=120))
    torchx("cancel", handle)
    status = torchx.wait_state(handle, {"CANCELLED", "FAILED", "SUCCEEDED"}, timeout=120)
    assert status["state"] == "CANCELLED", status
    for job in jobs.values():
        assert torchx.status(job)["state"] == "CANCELLED"
    time.sleep(1)
    assert not (torchx.cwd / "second-ran").exists()
