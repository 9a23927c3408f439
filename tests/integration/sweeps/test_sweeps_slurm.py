"""Sweeps on the project's three-node Slurm cluster (scripts/engines/slurm-up.sh): a 12-trial grid of
the PyTorch training script submitted as one job array (`sbatch --array=0-11%2`), at most two
tasks running at once by Slurm's own start and end times, the best trial found from what the tasks
reported; early stop cancelling the array's waiting tasks; cancel leaving no task.

Skips without a cluster unless TORCHX_REQUIRE_ENGINES names slurm."""

import datetime
import json
import os
import shutil
import subprocess

import pytest

from conftest import TRAIN_PY, max_overlap

if shutil.which("sbatch") is None or subprocess.run(["sinfo"], capture_output=True).returncode != 0:
    if "slurm" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","):
        raise RuntimeError("slurm is required (TORCHX_REQUIRE_ENGINES) but no cluster answers: "
                           "run scripts/engines/slurm-up.sh")
    pytest.skip("no Slurm cluster (scripts/engines/slurm-up.sh starts one)", allow_module_level=True)


def sacct_tasks(array_id: str) -> dict:
    """The array's tasks as accounting has them: task index -> (state, start, end) in epoch seconds."""
    out = subprocess.run(["sacct", "-X", "-n", "--parsable2", "-j", array_id, "-o", "JobID,State,Start,End"],
                         capture_output=True, text=True, check=True).stdout
    tasks = {}
    for line in out.splitlines():
        job, state, start, end = line.split("|")
        if "_" not in job or "[" in job:
            continue

        def epoch(t):
            return None if t in ("Unknown", "None", "") else datetime.datetime.fromisoformat(t).timestamp()

        tasks[int(job.split("_")[1])] = (state, epoch(start), epoch(end))
    return tasks


def test_grid_is_one_array_job_two_at_a_time(torchx):
    torchx.write("train.py", TRAIN_PY)
    torchx.write("sweep.yaml", """
name: lr-array
component: utils.python
args: [--script, train.py, --, --lr, "@{lr}", --hidden, "@{hidden}"]
scheduler: slurm
max_parallel: 2
objective: loss
space:
  parameters:
    lr: [0.0001, 0.001, 0.01, 0.05]
    hidden: [1, 4, 16]
""")
    assert "as one array job" in torchx("sweep", "run", "--dryrun", "sweep.yaml").stdout
    res = torchx("sweep", "run", "--wait", "sweep.yaml", timeout=900)
    handle = res.stdout.split()[0]
    view = torchx.sweep(handle)
    assert view["state"] == "SUCCEEDED", view
    trials = sorted(view["trials"], key=lambda t: t["index"])
    arrays = {t["handle"].rsplit("/", 1)[1].split("_")[0] for t in trials}
    assert len(arrays) == 1, [t["handle"] for t in trials]  # one sbatch
    array = arrays.pop()
    assert [t["handle"] for t in trials] == [f"slurm://torchx/{array}_{i}" for i in range(12)]
    tasks = sacct_tasks(array)
    assert sorted(tasks) == list(range(12)) and all(s == "COMPLETED" for s, _, _ in tasks.values()), tasks
    # Slurm's own times: %2 honoured, and used.
    assert max_overlap([{"submitted": start, "ended": end} for _, start, end in tasks.values()]) == 2, tasks
    # Each task's reports reached the sweep under its own run id (TORCHX_JOB_ID=slurm://torchx/<array>_<i>).
    assert all(t["objective"] is not None and t["metrics"]["step"] == 60 for t in trials), trials
    best = view["best"]
    assert best == min(trials, key=lambda t: t["objective"])["index"]
    log = torchx("log", f"{handle}/{best}").stdout
    assert f"trial {best} lr=" in log, log


def test_early_stop_cancels_the_waiting_tasks(torchx):
    res = torchx("sweep", "run", "--wait", "-s", "slurm", "--max_parallel", "1", "--max_failures", "1", "-p",
                 "code=1,0,0,0", "utils.sh", "sh", "-c", "sleep 1; exit @{code}", check=False, timeout=300)
    assert res.returncode == 1, res.stderr
    view = torchx.sweep(res.stdout.split()[0])
    states = {t["index"]: t["state"] for t in view["trials"]}
    assert states[0] == "FAILED" and all(states[i] == "CANCELLED" for i in (2, 3)), view
    array = view["trials"][0]["handle"].rsplit("/", 1)[1].split("_")[0]
    tasks = sacct_tasks(array)
    assert all(tasks.get(i, ("CANCELLED",))[0].startswith("CANCELLED") for i in (2, 3)), tasks
    assert "max_failures 1" in view["msg"]


def test_cancel_leaves_no_task(torchx):
    res = torchx("sweep", "run", "-s", "slurm", "--max_parallel", "2", "-p", "t=300,301,302,303", "utils.sh", "sleep",
                 "@{t}")
    handle = res.stdout.split()[0]
    view = torchx.wait_sweep(handle, {"RUNNING"}, timeout=120)
    array = view["trials"][0]["handle"].rsplit("/", 1)[1].split("_")[0]
    torchx("cancel", handle)
    torchx.wait_sweep(handle, {"CANCELLED"}, timeout=120)
    left = subprocess.run(["squeue", "-h", "-j", array], capture_output=True, text=True).stdout.strip()
    assert left == "", left
    assert json.loads(torchx("status", "--json", view["trials"][0]["handle"]).stdout)["state"] == "CANCELLED"
