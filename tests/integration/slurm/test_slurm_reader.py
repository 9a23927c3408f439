"""The batched Slurm reader on a real cluster (scripts/engines/slurm-up.sh): every reader of job
states on a host shares one `squeue` of all the user's jobs per refresh interval. The calls are
counted by wrappers on PATH that log each run and hand it to the real tool; the processes get a
runtime dir of their own, so their snapshot is this test's alone, and a `.torchxconfig` setting
`[slurm] status_interval` (read by the CLI and by Python's get_runner).

Skips without sbatch unless TORCHX_REQUIRE_ENGINES names slurm."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

if shutil.which("sbatch") is None or subprocess.run(["sinfo"], capture_output=True).returncode != 0:
    if "slurm" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","):
        raise RuntimeError("slurm is required (TORCHX_REQUIRE_ENGINES) but no cluster answers: "
                           "run scripts/engines/slurm-up.sh")
    pytest.skip("no Slurm cluster (scripts/engines/slurm-up.sh starts one)", allow_module_level=True)

TORCHX = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")
COUNTED = ("squeue", "sacct", "scontrol")


@pytest.fixture
def counted(tmp_path):
    """An environment whose squeue, sacct and scontrol are counted; and a function reading the
    counts."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    for tool in COUNTED:
        real = shutil.which(tool)
        wrapper = bin_dir / tool
        wrapper.write_text(f'#!/bin/sh\necho "{tool} $*" >> {log}\nexec {real} "$@"\n')
        wrapper.chmod(0o755)
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    # A long refresh interval: what is counted does not depend on how fast the processes start,
    # and an answer read fresh after run or cancel is so because of them, not because time passed.
    (tmp_path / ".torchxconfig").write_text("[slurm]\nstatus_interval = 30\n")
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", XDG_RUNTIME_DIR=str(run_dir))

    def counts():
        lines = log.read_text().splitlines() if log.exists() else []
        return {tool: sum(1 for line in lines if line.split()[0] == tool) for tool in COUNTED}, lines

    def reset():
        if log.exists():
            log.unlink()

    return env, counts, reset


@pytest.fixture
def sleeping_jobs(tmp_path):
    """Submits n jobs that sleep (sbatch directly: the launcher's own submissions are not what is
    counted) and cancels them after."""
    ids = []

    def submit(n):
        for _ in range(n):
            out = subprocess.run(["sbatch", "--parsable", "-o", "/dev/null", "-J", "reader-0", "--wrap", "sleep 300"],
                                 capture_output=True, text=True, check=True, cwd=tmp_path)
            ids.append(out.stdout.strip().split(";")[0])
        return [f"slurm://torchx/{i}" for i in ids[-n:]]

    yield submit
    if ids:
        subprocess.run(["scancel", *ids], capture_output=True)


FOLLOWER = textwrap.dedent("""
    import json, sys
    from torchx.runner import get_runner
    runner = get_runner()
    handles = json.loads(sys.argv[1])
    states = {h: str(runner.status(h).state) for h in handles}
    print(json.dumps(states))
""")


def test_two_processes_following_50_jobs_share_one_squeue(counted, sleeping_jobs, tmp_path):
    env, counts, reset = counted
    handles = sleeping_jobs(50)
    reset()
    script = tmp_path / "follow.py"
    script.write_text(FOLLOWER)
    procs = [subprocess.Popen([sys.executable, str(script), json.dumps(handles)], env=env, cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        states = json.loads(out)
        assert len(states) == 50
        assert set(states.values()) <= {"PENDING", "RUNNING", "AppState.PENDING", "AppState.RUNNING"}, states
    n, lines = counts()
    # One refresh for both processes and all 100 answers.
    assert n["squeue"] == 1, lines
    assert n["sacct"] == 0, lines


def test_ten_concurrent_status_calls_run_at_most_two_squeues(counted, sleeping_jobs, tmp_path):
    env, counts, reset = counted
    handles = sleeping_jobs(10)
    reset()
    procs = [subprocess.Popen([TORCHX, "status", "--json", h], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for h in handles]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert json.loads(out)["state"] in ("PENDING", "RUNNING"), out
    n, lines = counts()
    assert n["squeue"] <= 2, lines
    assert n["sacct"] == 0, lines


def test_status_right_after_run_and_cancel_is_fresh(counted, tmp_path):
    env, counts, reset = counted
    # A snapshot is taken first, so the run below comes after it.
    subprocess.run([TORCHX, "list", "-s", "slurm"], env=env, cwd=tmp_path, capture_output=True, check=True)
    run = subprocess.run([TORCHX, "run", "-s", "slurm", "utils.sh", "sleep", "300"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    handle = run.stdout.strip().splitlines()[0]
    try:
        status = subprocess.run([TORCHX, "status", "--json", handle], env=env, cwd=tmp_path, capture_output=True,
                                text=True, timeout=60)
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["state"] in ("PENDING", "RUNNING"), status.stdout
        cancel = subprocess.run([TORCHX, "cancel", handle], env=env, cwd=tmp_path, capture_output=True, text=True)
        assert cancel.returncode == 0, cancel.stderr
        # slurmctld shows a cancelled job COMPLETING (running) while its processes are killed;
        # answers taken in the 2 s after a cancel are kept 0.25 s only, so the end shows well
        # within the 30 s interval.
        deadline = time.monotonic() + 10
        while True:
            after = subprocess.run([TORCHX, "status", "--json", handle], env=env, cwd=tmp_path,
                                   capture_output=True, text=True, timeout=60)
            if json.loads(after.stdout)["state"] == "CANCELLED":
                break
            assert time.monotonic() < deadline, after.stdout
            time.sleep(0.2)
    finally:
        subprocess.run([TORCHX, "cancel", handle], env=env, cwd=tmp_path, capture_output=True)
