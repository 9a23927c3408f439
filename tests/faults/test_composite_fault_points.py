"""The composite driver killed at each of its numbered fault points (docs/reliability.md, "The
driver's fault points"), for every composite kind on local_cwd, through the CLI as users run it.

Each kind runs small children that append their name to `ran.txt` once they have started, and the
driver of the composite kills itself (SIGKILL, as the OOM killer would) at one point, twice, so
that the driver `status` revives dies there again. The contract, whatever the point: every child
runs exactly once, none is recorded as not having run when it did, the composite ends SUCCEEDED,
and the point was reached. The suite fails if a listed point is never hit (label faults, local)."""

import json
import os
import pathlib
import re
import shutil
import subprocess
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "ci" / "cli" / "torchx")
HEADER = REPO / "src" / "composite" / "fault_points.h"
TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}
TIMES = int(os.environ.get("TORCHX_FAULT_TIMES", "2"))


def listed_points() -> list:
    text = HEADER.read_text()
    body = text[text.index("kFaultPoints[]"):text.index("};", text.index("kFaultPoints[]"))]
    return re.findall(r'"(\w+)"', body)


POINTS = listed_points()
# What makes a driver reach a point: claims are left to resolve only by a driver that died between
# claiming and recording, so that point is reached after dying at "scheduled" first.
PRELUDE = {"claims_resolved": ["scheduled"]}
HIT = set()


class Cli:
    def __init__(self, tmp_path: pathlib.Path, points: list):
        self.cwd = tmp_path
        self.log = tmp_path / "faults.log"
        self.env = dict(os.environ, TORCHX_STATE_DIR=str(tmp_path / "state"), TORCHX_FAULT_POINT=",".join(points),
                        TORCHX_FAULT_LOG=str(self.log), TORCHX_FAULT_TIMES=str(TIMES))
        self.handles = []

    def __call__(self, *args, timeout=120):
        res = subprocess.run([BINARY, *args], capture_output=True, text=True, cwd=self.cwd, env=self.env,
                             timeout=timeout)
        assert res.returncode == 0, f"torchx {' '.join(args)} -> {res.returncode}\n{res.stdout}\n{res.stderr}"
        return res

    def launch(self, *args) -> str:
        handle = self(*args).stdout.split()[0]
        self.handles.append(handle)
        return handle

    def wait(self, handle: str, timeout: float = 90) -> dict:
        # Each `status` revives a dead driver (the contract: the next call that reads it).
        deadline = time.monotonic() + timeout
        while True:
            st = json.loads(self("status", "--json", handle).stdout)
            if st["state"] in TERMINAL:
                return st
            assert time.monotonic() < deadline, f"{handle} did not end: {st}"
            time.sleep(0.2)

    def deaths(self) -> list:
        return self.log.read_text().split() if self.log.exists() else []

    def ran(self) -> list:
        path = self.cwd / "ran.txt"
        return sorted(path.read_text().split()) if path.exists() else []


CHILD = 'sleep 0.1; echo "$1" >> ran.txt; sleep 0.2\n'
PIPELINE = """
name: fp
steps:
  a: {component: utils.sh, args: [sh, child.sh, a]}
  b: {component: utils.sh, args: [sh, child.sh, b], depends_on: a}
  c: {component: utils.sh, args: [sh, child.sh, c], depends_on: a}
"""


def launch_sweep(cli: Cli) -> tuple:
    return cli.launch("sweep", "run", "--max_parallel", "2", "-p", "i=t0,t1,t2,t3", "--name", "fp", "utils.sh",
                      "sh", "child.sh", "@{i}"), ["t0", "t1", "t2", "t3"]


def launch_pipeline(cli: Cli) -> tuple:
    (cli.cwd / "pipeline.yaml").write_text(PIPELINE)
    return cli.launch("pipeline", "run", "-s", "local_cwd", "pipeline.yaml"), ["a", "b", "c"]


def launch_managed(cli: Cli) -> tuple:
    return cli.launch("run", "--managed", "-s", "local_cwd", "utils.sh", "sh", "child.sh", "m"), ["m"]


KINDS = {"sweep": launch_sweep, "pipeline": launch_pipeline, "managed": launch_managed}


@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("kind", list(KINDS))
def test_each_child_runs_once_whatever_point_the_driver_dies_at(tmp_path, kind, point):
    points = PRELUDE.get(point, []) + [point]
    cli = Cli(tmp_path, points)
    (tmp_path / "child.sh").write_text(CHILD)
    handle, children = KINDS[kind](cli)
    try:
        st = cli.wait(handle)
    finally:  # nothing outlives the test, whatever failed
        subprocess.run([BINARY, "cancel", handle], capture_output=True, cwd=tmp_path, env=cli.env, timeout=60)
    deaths = cli.deaths()
    assert cli.ran() == sorted(children), (deaths, cli.ran(), st)  # each ran, once
    assert st["state"] == "SUCCEEDED", (deaths, st)
    if point in deaths:
        HIT.add(point)
    assert point in deaths, f"{kind}: the driver never reached {point}: {deaths}"


def have_slurm() -> bool:
    return shutil.which("sbatch") is not None and subprocess.run(["sinfo"], capture_output=True).returncode == 0


needs_slurm = pytest.mark.skipif(
    not have_slurm() and "slurm" not in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","),
    reason="no Slurm cluster (scripts/engines/slurm-up.sh starts one)")

SLURM_PIPELINE = """
name: fpslurm
steps:
  a: {component: utils.sh, args: [sh, child.sh, a], scheduler: slurm}
  b: {component: utils.sh, args: [sh, child.sh, b], depends_on: a, scheduler: local_cwd}
"""


def launch_slurm_pipeline(cli: Cli) -> tuple:
    # A step on Slurm and one here: sequenced by the driver, whose claims of the Slurm step carry a
    # key (Slurm picks the job id at submission) that the job's comment is tagged with.
    (cli.cwd / "pipeline.yaml").write_text(SLURM_PIPELINE)
    return cli.launch("pipeline", "run", "pipeline.yaml"), ["a", "b"]


def launch_slurm_managed(cli: Cli) -> tuple:
    return cli.launch("run", "--managed", "-s", "slurm", "utils.sh", "sh", "child.sh", "m"), ["m"]


@needs_slurm
@pytest.mark.parametrize("point", ["scheduled", "recorded"])
@pytest.mark.parametrize("kind", ["pipeline", "managed"])
def test_on_slurm_a_job_submitted_by_a_driver_that_died_is_found_by_its_key(tmp_path, kind, point):
    # Killed after sbatch answered and before the job id was recorded ("scheduled"): the next
    # driver finds the job by the key in its comment and adopts it, so it runs once.
    cli = Cli(tmp_path, [point])
    cli.env["TORCHX_FAULT_TIMES"] = "1"
    (tmp_path / "child.sh").write_text(CHILD)
    handle, children = (launch_slurm_pipeline if kind == "pipeline" else launch_slurm_managed)(cli)
    try:
        st = cli.wait(handle, timeout=180)
    finally:
        subprocess.run([BINARY, "cancel", handle], capture_output=True, cwd=tmp_path, env=cli.env, timeout=60)
    deaths = cli.deaths()
    assert deaths == [point], deaths
    assert cli.ran() == sorted(children), (deaths, cli.ran(), st)
    assert st["state"] == "SUCCEEDED", st


def test_every_listed_point_was_hit():
    missed = [p for p in POINTS if p not in HIT]
    assert POINTS and not missed, f"fault points never reached: {missed} (listed: {POINTS})"
