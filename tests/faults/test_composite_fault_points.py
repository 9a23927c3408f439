"""The composite driver killed at each of its numbered fault points (docs/reliability.md, "The
driver's fault points"), for every composite kind on local_cwd, through the CLI as users run it.

Each kind runs small children that append their name to `ran.txt` once they have started, and the
driver of the composite kills itself (SIGKILL, as the OOM killer would) at one point, twice, so
that the driver `status` revives dies there again. The contract, whatever the point: every child
runs exactly once, none is recorded as not having run when it did, the composite ends SUCCEEDED,
and the point was reached. The suite fails if a listed point is never hit (label faults, local)."""

import errno
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "integration" / "common"))
from composite_driver import driver_processes, kill_driver_and_watchdog, wait_for_driver  # noqa: E402

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
RAN = set()  # the points whose cases ran (a `-k` selection runs some)


def ring_module() -> str:
    """The test-only kind's module (ctest passes it; a manual run finds the ci build's)."""
    path = os.environ.get("TORCHX_COMPOSITE_KINDS") or str(
        REPO / "build" / "ci" / "tests" / "composite_ring" / "torchx_kind_ring.so")
    assert all(os.path.exists(p) for p in path.split(":")), (
        f"the ring kind's module is not built: {path} (cmake --build --preset ci --target torchx_kind_ring)")
    return path


class Cli:
    def __init__(self, tmp_path: pathlib.Path, points: list):
        self.cwd = tmp_path
        self.log = tmp_path / "faults.log"
        self.env = dict(os.environ, TORCHX_STATE_DIR=str(tmp_path / "state"), TORCHX_FAULT_POINT=",".join(points),
                        TORCHX_FAULT_LOG=str(self.log), TORCHX_FAULT_TIMES=str(TIMES),
                        TORCHX_COMPOSITE_KINDS=ring_module())
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


RING = """
name: fp
links:
  - {component: utils.sh, args: [sh, child.sh, l0]}
  - {component: utils.sh, args: [sh, child.sh, l1]}
  - {component: utils.sh, args: [sh, child.sh, l2]}
"""


def launch_ring(cli: Cli) -> tuple:
    # The test-only fourth kind (tests/composite_ring/), loaded as a module: nothing in cli/,
    # src/ui/ or python/ext names it, so `composite run` and the generic verbs are all it has.
    (cli.cwd / "ring.yaml").write_text(RING)
    return cli.launch("composite", "run", "ring", "ring.yaml"), ["l0", "l1", "l2"]


KINDS = {"sweep": launch_sweep, "pipeline": launch_pipeline, "managed": launch_managed, "ring": launch_ring}


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
    RAN.add(point)
    assert cli.ran() == sorted(children), (deaths, cli.ran(), st)  # each ran, once
    assert st["state"] == "SUCCEEDED", (deaths, st)
    if point in deaths:
        HIT.add(point)
    assert point in deaths, f"{kind}: the driver never reached {point}: {deaths}"


SLOW_CHILD = 'echo "$1" >> ran.txt; sleep 3\n'


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_cancel_right_after_the_driver_died_starts_nothing_new(tmp_path, kind):
    # The driver and its watchdog killed (as a reboot would) while the first children run, then
    # `cancel` at once: the cancel is recorded before any driver is revived, so no child that had
    # not started starts, what runs is cancelled, and the composite ends CANCELLED.
    cli = Cli(tmp_path, [])
    (tmp_path / "child.sh").write_text(SLOW_CHILD)
    handle, children = KINDS[kind](cli)
    composite_id = handle.rsplit("/", 1)[1]
    try:
        wait_for_driver(composite_id)
        deadline = time.monotonic() + 30
        while not cli.ran():
            assert time.monotonic() < deadline, "no child started"
            time.sleep(0.05)
        assert kill_driver_and_watchdog(composite_id) == 2
        time.sleep(0.5)  # a child submitted before the kill writes its marker as it starts
        started = cli.ran()
        cli("cancel", handle)
        st = cli.wait(handle)
        time.sleep(1)  # a child a revived driver would have started has had time to say so
    finally:
        subprocess.run([BINARY, "cancel", handle], capture_output=True, cwd=tmp_path, env=cli.env, timeout=60)
    assert st["state"] == "CANCELLED", st
    assert cli.ran() == started, (started, cli.ran())
    assert set(started) < set(children) or len(children) == 1, started
    ended = ended_children(cli, handle)  # nothing left running: each child's own scheduler says so
    assert ended and all(ended), ended


KIND_DIRS = {"sweep": "sweeps", "pipeline": "pipelines", "managed": "managed", "ring": "rings"}
ONE_SECOND_CHILD = 'echo "$1" >> ran.txt; sleep 1\n'


def recorded_children(cli: Cli, handle: str) -> list:
    """The handles the composite's record holds for its children."""
    listed = json.loads(cli("list", "--json", "-s", handle.split(":", 1)[0]).stdout)
    return [m["app_handle"] for app in listed if app["app_handle"] == handle for m in app["members"]
            if m["app_handle"]]


def ended_children(cli: Cli, handle: str) -> list:
    listed = json.loads(cli("list", "--json", "-s", handle.split(":", 1)[0]).stdout)
    members = [m for app in listed if app["app_handle"] == handle for m in app["members"]]
    return [json.loads(cli("status", "--json", m["app_handle"]).stdout)["state"] in TERMINAL
            for m in members if m["app_handle"]]


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_records_directory_read_only_then_writable_again(tmp_path, kind):
    # The kind's record directory alone on a small tmpfs, remounted read-only while the driver
    # works (CI runs as root: chmod would stop nothing), then writable again: the driver's writes
    # fail and are tried again under its error budget; `status` still reads it; once writable the
    # composite goes on. Every child runs exactly once and it ends SUCCEEDED.
    cli = Cli(tmp_path, [])
    records = tmp_path / "state" / KIND_DIRS[kind]
    records.mkdir(parents=True)
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", str(records)], capture_output=True,
                         text=True)
    if res.returncode != 0:
        assert "faults" not in os.environ.get("TORCHX_REQUIRE_ENGINES", ""), res.stderr
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    handle = None
    try:
        (tmp_path / "child.sh").write_text(ONE_SECOND_CHILD)
        handle, children = KINDS[kind](cli)
        # Once a child's handle is recorded: a write refused between a submission and its record
        # would (by design) cancel what was submitted, which is not this case's fault.
        deadline = time.monotonic() + 30
        while not recorded_children(cli, handle):
            assert time.monotonic() < deadline, "no child's handle was recorded"
            time.sleep(0.05)
        # Read-only from now on for every new open and rename there. (A plain `remount,ro` is
        # refused while the driver's log and lock are open for writing: a read-only bind mount
        # over the directory is what a process opening it next meets.)
        for _ in range(50):  # a write opened between the two calls makes the second one EBUSY: again
            subprocess.run(["mount", "--bind", str(records), str(records)], check=True)
            if subprocess.run(["mount", "-o", "remount,bind,ro", str(records)], capture_output=True).returncode == 0:
                break
            subprocess.run(["umount", "-l", str(records)], check=True)
        else:
            pytest.fail(f"{records} could not be made read-only")
        try:
            with pytest.raises(OSError) as refused:  # the fault is in place: even root cannot write
                (records / "probe").write_text("x")
            assert refused.value.errno == errno.EROFS, refused.value
            for _ in range(10):  # read while it cannot be written: an answer, not a crash
                res = subprocess.run([BINARY, "status", "--json", handle], capture_output=True, text=True,
                                     cwd=tmp_path, env=cli.env, timeout=60)
                assert res.returncode == 0, (res.returncode, res.stderr)
                time.sleep(0.2)
        finally:
            subprocess.run(["umount", "-l", str(records)], check=True)  # the bind mount: writable again
        st = cli.wait(handle, timeout=120)
        assert cli.ran() == sorted(children), (cli.ran(), st)
        assert st["state"] == "SUCCEEDED", st
    finally:
        try:
            if handle:
                subprocess.run([BINARY, "cancel", handle], capture_output=True, cwd=tmp_path, env=cli.env, timeout=60)
                cli.wait(handle, timeout=60)
        finally:  # whatever failed above, no mount outlives the test
            while subprocess.run(["umount", "-l", str(records)], capture_output=True).returncode == 0:
                pass  # the bind mount, if still there, then the tmpfs


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_second_launcher_reads_and_cancels_while_the_driver_works(tmp_path, kind):
    # Another process polls `status` (which may revive, never double, the driver) while the driver
    # submits, and then cancels: no child runs twice, every child ends, and it ends CANCELLED.

    cli = Cli(tmp_path, [])
    (tmp_path / "child.sh").write_text(SLOW_CHILD)
    handle, children = KINDS[kind](cli)
    stop = threading.Event()
    errors = []

    def poll():
        while not stop.is_set():
            try:
                res = subprocess.run([BINARY, "status", "--json", handle], capture_output=True, text=True,
                                     cwd=tmp_path, env=cli.env, timeout=60)
            except Exception as e:  # noqa: BLE001 - any failure of the second launcher is the test's
                errors.append(repr(e))
                return
            if res.returncode != 0:
                errors.append(res.stderr)

    second = threading.Thread(target=poll)
    second.start()
    try:
        deadline = time.monotonic() + 30
        while not cli.ran():
            assert time.monotonic() < deadline, "no child started"
            time.sleep(0.05)
        cli("cancel", handle)
        st = cli.wait(handle)
    finally:
        stop.set()
        second.join()
        subprocess.run([BINARY, "cancel", handle], capture_output=True, cwd=tmp_path, env=cli.env, timeout=60)
    assert not errors, errors[:3]
    assert st["state"] == "CANCELLED", st
    deadline = time.monotonic() + 15  # the driver, and never a second one, ends with its composite
    while driver_processes(handle.rsplit("/", 1)[1]):
        assert time.monotonic() < deadline, f"drivers outlived their composite: {driver_processes(handle)}"
        time.sleep(0.1)
    ran = cli.ran()
    assert len(ran) == len(set(ran)) and set(ran) <= set(children), ran
    assert all(ended_children(cli, handle)), "a child still runs after the cancel"


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


SLURM_SWEEP = """
name: fpslurm
max_parallel: 2
app:
  name: trial
  roles:
    - {name: run, image: IMAGE, entrypoint: sh, args: [child.sh, "@{i}"], resource: {cpu: 1, gpu: 0, memMB: 256}}
    - {name: side, image: IMAGE, entrypoint: "true", resource: {cpu: 1, gpu: 0, memMB: 256}}
space: {type: grid, parameters: {i: [t0, t1, t2]}}
"""


def launch_slurm_sweep(cli: Cli) -> tuple:
    # Trials of two roles are no job array: the driver submits each (sbatch), its claim keyed.
    (cli.cwd / "sweep.yaml").write_text(SLURM_SWEEP.replace("IMAGE", str(cli.cwd)))
    return cli.launch("sweep", "run", "-s", "slurm", "sweep.yaml"), ["t0", "t1", "t2"]


def launch_slurm_ring(cli: Cli) -> tuple:
    (cli.cwd / "ring.yaml").write_text(RING)
    return cli.launch("composite", "run", "ring", "-s", "slurm", "ring.yaml"), ["l0", "l1", "l2"]


SLURM_KINDS = {"pipeline": launch_slurm_pipeline, "managed": launch_slurm_managed, "sweep": launch_slurm_sweep,
               "ring": launch_slurm_ring}


@needs_slurm
@pytest.mark.parametrize("point", ["scheduled", "recorded"])
@pytest.mark.parametrize("kind", list(SLURM_KINDS))
def test_on_slurm_a_job_submitted_by_a_driver_that_died_is_found_by_its_key(tmp_path, kind, point):
    # Killed after sbatch answered and before the job id was recorded ("scheduled"): the next
    # driver finds the job by the key in its comment and adopts it, so it runs once.
    cli = Cli(tmp_path, [point])
    cli.env["TORCHX_FAULT_TIMES"] = "1"
    (tmp_path / "child.sh").write_text(CHILD)
    handle, children = SLURM_KINDS[kind](cli)
    try:
        st = cli.wait(handle, timeout=180)
    finally:
        subprocess.run([BINARY, "cancel", handle], capture_output=True, cwd=tmp_path, env=cli.env, timeout=60)
    deaths = cli.deaths()
    assert deaths == [point], deaths
    assert cli.ran() == sorted(children), (deaths, cli.ran(), st)
    assert st["state"] == "SUCCEEDED", st


def test_every_listed_point_was_hit():
    # Each case checks its own point; this one that the header lists points at all, and that none
    # whose cases ran went unhit (it runs last: pytest keeps the file's order).
    assert POINTS, f"no fault points listed in {HEADER}"
    if not RAN:
        pytest.skip("no fault point case ran in this selection")
    missed = [p for p in sorted(RAN) if p not in HIT]
    assert not missed, f"fault points never reached: {missed} (listed: {POINTS})"
