"""slurm when its controller fails (ctest label `faults` + `slurm`): slurmctld stopped and started
again while jobs run. During the outage `status` says so plainly (state from accounting) and
`run --wait` waits it out; afterwards the jobs end as Slurm ends them, their logs whole.

Skips without a cluster unless TORCHX_REQUIRE_ENGINES names slurm. It restarts slurmctld the way
scripts/engines/slurm-up.sh starts it, so it runs alone (RUN_SERIAL)."""

import json
import os
import pathlib
import shutil
import subprocess
import time

import pytest

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


def test_slurmctld_restarted_under_running_jobs(tmp_path):
    handle = cli("run", "-s", "slurm", "utils.sh", "sh", "-c", "echo up; sleep 20; echo done",
                 cwd=tmp_path).stdout.split()[0]
    waiter = subprocess.Popen([BINARY, "run", "--wait", "-s", "slurm", "utils.sh", "sh", "-c", "sleep 20; echo waited"],
                              cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while status(handle, tmp_path)["state"] != "RUNNING" and time.monotonic() < deadline:
            time.sleep(0.5)
        subprocess.run(["pkill", "-x", "slurmctld"], check=True)
        deadline = time.monotonic() + 20
        while controller_up() and time.monotonic() < deadline:
            time.sleep(0.2)
        during = status(handle, tmp_path)  # from accounting, and says so
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
