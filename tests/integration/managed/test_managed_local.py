"""Managed jobs on local_cwd through the CLI, as users run them: a PyTorch training run whose
supervisor is killed -9 mid-run is submitted again and resumes from its checkpoint; the managed
job's own driver killed -9 resumes its watch without submitting twice; a script's own failure is
not recovered unless asked; a cancel (of the managed job, or of its attempt from outside) ends it;
bad options submit and record nothing.

The PyTorch case needs torch (skipped without it unless TORCHX_REQUIRE_ENGINES names torch)."""

import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

from conftest import TRAIN_PY, needs_torch

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "common"))
from composite_driver import kill_driver_and_watchdog, wait_for_driver  # noqa: E402


def supervisor_pids(app_id: str):
    out = subprocess.run(["pgrep", "-f", f"torchx-supervisor .* {app_id}$"], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


@needs_torch
def test_supervisor_killed_mid_run_is_recovered_from_its_checkpoint(torchx):
    torchx.write("train.py", TRAIN_PY)
    handle = torchx("run", "--managed", "-s", "local_cwd", "utils.python", "--script", "train.py", "--",
                    "40", "0.2").stdout.split()[0]
    assert handle.startswith("managed://torchx/")
    d = torchx.wait_for(handle, None, what=lambda d: d["attempts"] and d["attempts"][0].get("handle"))
    first = d["attempts"][0]["handle"]
    ckpt = torchx.cwd / ".torchx" / "checkpoints" / handle.rsplit("/", 1)[1] / "model.pt"
    deadline = time.monotonic() + 120
    while not ckpt.exists() or "checkpoint step 5" not in torchx("log", f"{handle}/python/0").stdout:
        assert time.monotonic() < deadline, torchx("log", f"{handle}/python/0", check=False).stdout
        time.sleep(0.3)
    for pid in supervisor_pids(first.rsplit("/", 1)[1]):
        os.kill(pid, signal.SIGKILL)
    d = torchx.wait_for(handle, ("SUCCEEDED", "FAILED", "CANCELLED"), timeout=240)
    assert d["state"] == "SUCCEEDED", d
    assert [a["attempt"] for a in d["attempts"]] == [0, 1], d
    assert d["attempts"][0]["cause"] == "supervisor_lost", d
    assert d["attempts"][1]["why"] == "recovery 1 after supervisor_lost", d
    assert d["msg"] == "succeeded after 1 recovery"
    status = json.loads(torchx("status", "--json", handle).stdout)
    assert status["state"] == "SUCCEEDED" and status["num_restarts"] == 1, status
    log = torchx("log", f"{handle}/python/0").stdout
    starts = re.findall(r"\[attempt (\d)\] rank 0 attempt (\d) starts at step (\d+)", log)
    assert starts[0] == ("0", "0", "0"), log
    assert starts[1][:2] == ("1", "1") and int(starts[1][2]) >= 5, log  # resumed, not restarted
    assert "[attempt 1] rank 0 done at step 40" in log


def test_driver_killed_resumes_its_watch_without_submitting_twice(torchx):
    handle = torchx("run", "--managed", "-s", "local_cwd", "utils.sh", "sh", "-c",
                    "echo run $TORCHX_RECOVERY_COUNT; sleep 6").stdout.split()[0]
    job_id = handle.rsplit("/", 1)[1]
    torchx.wait_for(handle, ("RUNNING",))
    wait_for_driver(job_id)
    assert kill_driver_and_watchdog(job_id) == 2  # as a reboot would: nothing revives it but a call
    time.sleep(0.5)
    d = torchx.wait_for(handle, ("SUCCEEDED", "FAILED"), timeout=120)  # the call starts a new driver
    assert d["state"] == "SUCCEEDED", d
    assert len(d["attempts"]) == 1, d
    assert torchx("log", handle).stdout == "sh/0 [attempt 0] run 0\n"
    assert torchx("list", "-s", "local_cwd").stdout.count("local_cwd://") == 1  # one app, submitted once


def test_a_scripts_own_failure_is_recovered_only_when_asked(torchx):
    script = "echo attempt $TORCHX_RECOVERY_COUNT; [ $TORCHX_RECOVERY_COUNT -ge 1 ]"
    handle = torchx("run", "--managed", "-s", "local_cwd", "utils.sh", "sh", "-c", script).stdout.split()[0]
    d = torchx.wait_for(handle, ("SUCCEEDED", "FAILED"))
    assert d["state"] == "FAILED" and len(d["attempts"]) == 1, d
    assert d["attempts"][0]["cause"] == "user_error", d
    assert "--recover_on user_error would" in d["msg"], d
    res = torchx("run", "--managed", "--recover_on", "user_error", "-s", "local_cwd", "utils.sh", "sh", "-c", script)
    d = torchx.wait_for(res.stdout.split()[0], ("SUCCEEDED", "FAILED"))
    assert d["state"] == "SUCCEEDED" and len(d["attempts"]) == 2, d
    # max_recoveries bounds it: a script that always fails is tried 1 + 2 times.
    res = torchx("run", "--managed", "--recover_on", "user_error", "--max_recoveries", "2", "--wait", "-s",
                 "local_cwd", "utils.sh", "sh", "-c", "exit 3", check=False)
    assert res.returncode == 1, res
    d = torchx.describe(res.stdout.split()[0])
    assert d["state"] == "FAILED" and len(d["attempts"]) == 3, d
    assert "3 failures on local_cwd (max_recoveries=2)" in d["msg"], d


def test_cancels_end_the_run(torchx):
    handle = torchx("run", "--managed", "-s", "local_cwd", "utils.sh", "sleep", "60").stdout.split()[0]
    d = torchx.wait_for(handle, ("RUNNING",))
    attempt = d["attempts"][0]["handle"]
    torchx("cancel", handle)
    d = torchx.wait_for(handle, ("CANCELLED",), timeout=60)
    assert len(d["attempts"]) == 1
    assert json.loads(torchx("status", "--json", attempt).stdout)["state"] == "CANCELLED"
    # A cancel from outside (of the attempt itself) is a person's decision: not recovered.
    handle = torchx("run", "--managed", "-s", "local_cwd", "utils.sh", "sleep", "60").stdout.split()[0]
    d = torchx.wait_for(handle, ("RUNNING",))
    torchx("cancel", d["attempts"][0]["handle"])
    d = torchx.wait_for(handle, ("CANCELLED", "FAILED", "SUCCEEDED"), timeout=60)
    assert d["state"] == "CANCELLED" and len(d["attempts"]) == 1, d
    assert "cancelled outside the launcher" in d["msg"], d


def test_bad_options_submit_and_record_nothing(torchx):
    for args, says in [
        (["--failover", "nosuch"], "--failover nosuch: "),
        (["--failover", "local_cwd:bogus=1"], "bogus"),
        (["--recover_on", "gremlins"], "--recover_on: unknown cause `gremlins`; valid choices: user_error"),
        (["--recover_on", "cancelled"], "person's decision"),
        (["--start_timeout", "soon"], "--start_timeout: `soon` is not a duration"),
        (["--max_recoveries", "-1"], "--max_recoveries: -1 is negative"),
    ]:
        res = torchx("run", "--managed", *args, "-s", "local_cwd", "utils.echo", check=False)
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        assert says in res.stderr, (args, res.stderr)
    res = torchx("run", "--max_recoveries", "2", "-s", "local_cwd", "utils.echo", check=False)
    assert res.returncode == 2 and "need --managed" in res.stderr, res.stderr
    assert not (torchx.state / "managed").exists() or not list((torchx.state / "managed").glob("*.json"))
    assert "local_cwd://" not in torchx("list", "-s", "local_cwd").stdout
    dry = torchx("run", "--managed", "--dryrun", "--failover", "local_cwd", "-s", "local_cwd", "utils.echo").stdout
    assert "=== TARGET 0: local_cwd ===" in dry and "=== TARGET 1: local_cwd ===" in dry
    assert "TORCHX_CHECKPOINT_DIR=" in dry and "TORCHX_RECOVERY_COUNT=0" in dry
