"""Pipelines on local_cwd through the CLI, as users run them: prepare -> dist.ddp -j 2x1 ->
evaluate passing files between steps, a failing middle step leaving the last one not run, cancel
cascading, the detached driver surviving a kill -9, and bad pipeline files submitting nothing.

The DDP case needs torch (skipped without it unless TORCHX_REQUIRE_ENGINES names torch)."""

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import pytest
import yaml

from conftest import TRAIN_PY, free_port

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "common"))
from composite_driver import kill_driver_and_watchdog, wait_for_driver, watchdog_and_driver  # noqa: E402

SUCCEEDED, CANCELLED = 4, 6  # replica states as TorchX's JSON gives them


def have_torch() -> bool:
    return subprocess.run(["python3", "-c", "import torch.distributed"], capture_output=True).returncode == 0


needs_torch = pytest.mark.skipif(
    not have_torch() and "torch" not in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","),
    reason="torch is not installed")


@needs_torch
def test_prepare_ddp_evaluate_pass_files_between_steps(torchx):
    torchx.write("train.py", TRAIN_PY)
    torchx.write("flow.yaml", f"""
name: flow
steps:
  prepare:
    component: utils.sh
    args: [sh, -c, "echo tokens > data.txt"]
  train:
    component: dist.ddp
    args: [-j, 2x1, --rdzv_port, {free_port()}, --script, train.py]
    depends_on: prepare
  evaluate:
    component: utils.sh
    args: [sh, -c, "cat model.txt"]
    depends_on: [train]
""")
    res = torchx("pipeline", "run", "--wait", "flow.yaml", timeout=600)
    handle = res.stdout.split()[0]
    assert handle.startswith("pipeline://torchx/flow-")
    status = torchx.status(handle)
    assert status["state"] == "SUCCEEDED", status
    assert torchx.roles(handle) == {"prepare": [SUCCEEDED], "train": [SUCCEEDED, SUCCEEDED],
                                    "evaluate": [SUCCEEDED]}
    assert torchx("log", f"{handle}/evaluate").stdout == "evaluate/0 model of tokens world=2 sum=2\n"
    train_log = torchx("log", f"{handle}/train").stdout
    assert "trained rank=0 on tokens" in train_log
    listed = torchx("list", "-s", "pipeline").stdout
    assert handle in listed and "SUCCEEDED" in listed
    # Each step is an app of its own scheduler too, started in the order of the dependencies.
    steps = {line.split()[0]: line for line in status["msg"].split("; ")}
    assert set(steps) == {"prepare", "train", "evaluate"}


def test_a_failing_middle_step_leaves_the_last_not_run(torchx):
    torchx.write("flow.yaml", """
steps:
  prepare: {component: utils.sh, args: [sh, -c, "echo ok > data.txt"]}
  train: {component: utils.sh, args: [sh, -c, "echo broken; exit 3"], depends_on: prepare}
  evaluate: {component: utils.sh, args: [sh, -c, "touch evaluated"], depends_on: train}
""")
    res = torchx("pipeline", "run", "--wait", "flow.yaml", check=False)
    assert res.returncode == 1, res.stderr
    handle = res.stdout.split()[0]
    status = torchx.status(handle)
    assert status["state"] == "FAILED"
    assert status["msg"].startswith("step train did not succeed")
    assert "train FAILED" in status["msg"] and "exited with code 3" in status["msg"]
    assert "evaluate not run: step `train` FAILED" in status["msg"]
    assert torchx.roles(handle)["evaluate"] == [CANCELLED]
    assert (torchx.cwd / "data.txt").exists()

    # `torchx list` (no -s) has the pipeline with its steps nested under it, each step's app named
    # after its step; `-s local_cwd` lists the steps' apps flat, as TorchX would.
    listed = json.loads(torchx("list", "--json").stdout)
    mine = [a for a in listed if a["app_handle"] == handle]
    assert len(mine) == 1 and mine[0]["state"] == "FAILED", listed
    members = {m["name"]: m for m in mine[0]["members"]}
    assert list(members) == ["prepare", "train", "evaluate"]
    assert members["train"]["depends_on"] == ["prepare"] and members["train"]["state"] == "FAILED"
    assert "/train-" in members["train"]["app_handle"] and members["evaluate"]["app_handle"] == ""
    assert members["prepare"]["submitted"] <= members["prepare"]["ended"] <= members["train"]["submitted"]
    assert not any(a["app_handle"] == members["train"]["app_handle"] for a in listed)  # nested only
    table = torchx("list").stdout.splitlines()
    row = next(i for i, line in enumerate(table) if line.startswith(handle))
    assert table[row + 1].startswith("  |- local_cwd://") and " prepare " in table[row + 1]
    assert table[row + 3].startswith("  `- (not submitted)") and "not run" in table[row + 3]
    flat = torchx("list", "-s", "local_cwd").stdout
    assert members["train"]["app_handle"] in flat and handle not in flat
    # describe gives the pipeline back as a file that runs it, depends_on included.
    described = yaml.safe_load(torchx("describe", handle).stdout)
    assert described["steps"]["evaluate"]["depends_on"] == ["train"]
    assert described["steps"]["train"]["app"]["roles"][0]["entrypoint"] == "sh"
    assert json.loads(torchx("describe", "--json", handle).stdout)["steps"]["train"]["depends_on"] == ["prepare"]
    assert not (torchx.cwd / "evaluated").exists()
    assert torchx("log", f"{handle}/train").stdout == "train/0 broken\n"
    assert torchx("log", f"{handle}/evaluate").stdout == ""  # it never ran


def test_cancel_cascades_to_the_running_step_and_the_rest(torchx):
    torchx.write("flow.yaml", """
steps:
  first: {component: utils.sh, args: [sleep, "300"]}
  second: {component: utils.sh, args: [touch, second-ran], depends_on: first}
""")
    handle = torchx("pipeline", "run", "flow.yaml").stdout.split()[0]
    torchx.wait_state(handle, {"RUNNING"}, timeout=60)
    first = [s for s in torchx.status(handle)["msg"].split("; ") if s.startswith("first")][0]
    first_handle = first.split()[2]
    assert first_handle.startswith("local_cwd://")
    torchx("cancel", handle)
    status = torchx.wait_state(handle, {"CANCELLED"}, timeout=60)
    assert "second not run: the pipeline was cancelled" in status["msg"]
    assert torchx.status(first_handle)["state"] == "CANCELLED"  # the step's own app
    torchx("cancel", handle)  # idempotent
    time.sleep(1)
    assert not (torchx.cwd / "second-ran").exists()
    # A pipeline that ended can be deleted, and its steps' records go with it.
    torchx("delete", handle)
    assert torchx("status", handle, check=False).returncode != 0
    assert torchx("status", first_handle, check=False).returncode != 0


def test_the_driver_is_detached_and_a_status_call_restarts_it_after_a_kill(torchx):
    torchx.write("flow.yaml", """
steps:
  first: {component: utils.sh, args: [sleep, "3"]}
  second: {component: utils.sh, args: [sh, -c, "echo second > second.txt"], depends_on: first}
""")
    handle = torchx("pipeline", "run", "flow.yaml").stdout.split()[0]
    pipeline_id = handle.rsplit("/", 1)[1]
    watchdog, driver = wait_for_driver(pipeline_id)
    assert os.getsid(watchdog) != os.getsid(0)  # its own session: closing the terminal does not stop it
    torchx.wait_state(handle, {"RUNNING"}, timeout=30)  # the first step submitted and recorded
    assert kill_driver_and_watchdog(pipeline_id) == 2  # as a reboot would: nothing revives it but a call
    time.sleep(0.3)
    assert watchdog_and_driver(pipeline_id) == (None, None)
    torchx.status(handle)  # finds no driver, starts one; it resumes where the record left off
    assert torchx.wait_state(handle, {"SUCCEEDED", "FAILED"}, timeout=60)["state"] == "SUCCEEDED"
    assert (torchx.cwd / "second.txt").read_text() == "second\n"


def test_a_driver_killed_alone_is_replaced_by_its_watchdog_with_no_call(torchx):
    # The OOM killer picks one process: the driver. Its watchdog starts another at once, so the
    # pipeline moves on with nobody calling (no status, no wait: only the steps' files are read).
    torchx.write("flow.yaml", """
steps:
  first: {component: utils.sh, args: [sh, -c, "echo first >> ran.txt; sleep 1"]}
  second: {component: utils.sh, args: [sh, -c, "echo second >> ran.txt"], depends_on: first}
""")
    handle = torchx("pipeline", "run", "flow.yaml").stdout.split()[0]
    pipeline_id = handle.rsplit("/", 1)[1]
    ran = torchx.cwd / "ran.txt"
    deadline = time.monotonic() + 30
    while not ran.exists():
        assert time.monotonic() < deadline, "the first step never ran"
        time.sleep(0.05)
    watchdog, driver = wait_for_driver(pipeline_id)
    os.kill(driver, signal.SIGKILL)
    while ran.read_text().split() != ["first", "second"]:
        assert time.monotonic() < deadline, ran.read_text()
        time.sleep(0.1)
    replaced = watchdog_and_driver(pipeline_id)
    assert replaced[0] in (watchdog, None) and replaced[1] != driver, (watchdog, driver, replaced)
    assert torchx.wait_state(handle, {"SUCCEEDED", "FAILED"}, timeout=30)["state"] == "SUCCEEDED"
    log = (pathlib.Path(torchx.env["TORCHX_STATE_DIR"]) / "pipelines" / f"{pipeline_id}.driver.log").read_text()
    assert "the driver was killed (signal 9); started again" in log, log


@pytest.mark.parametrize("body,error", [
    ("steps:\n  a: {component: utils.sh, args: [echo], depends_on: [b]}\n"
     "  b: {component: utils.sh, args: [echo], depends_on: a}\n", "steps: dependency cycle a -> b -> a"),
    ("steps:\n  a: {component: utils.sh, args: [echo]}\n  b: {component: utils.sh, depends_on: [c]}\n",
     "steps.b.depends_on[0]: unknown step `c`"),
    ("steps:\n  a: {component: utils.sh, args: [echo]}\n  b: {component: utils.echoo, depends_on: a}\n",
     "steps.b: component `utils.echoo` not found. Did you mean `utils.echo`?"),
    ("steps:\n  a: {component: utils.sh, args: [echo]}\n  b: {component: utils.echo, args: [--msgg, x]}\n",
     "steps.b: utils.echo: unrecognized argument '--msgg'"),
    ("steps:\n  a: {component: utils.sh, args: [echo]}\n  b: {component: utils.echo, cfg: {log_dirr: x}}\n",
     "steps.b.cfg.log_dirr: unknown option for scheduler local_cwd"),
    ("steps:\n  a: {component: utils.echo, scheduler: slurmm}\n", "steps.a.scheduler"),
])
def test_a_bad_pipeline_file_is_an_error_and_submits_nothing(torchx, body, error):
    torchx.write("bad.yaml", body)
    res = torchx("pipeline", "run", "bad.yaml", check=False)
    assert res.returncode == 2, res
    assert error in res.stderr, res.stderr
    assert res.stdout == ""
    assert torchx("list", "-s", "local_cwd").stdout.count("local_cwd://") == 0
    assert torchx("list", "-s", "pipeline").stdout.count("pipeline://") == 0


def test_dryrun_validates_and_prints_every_step(torchx):
    torchx.write("flow.yaml", """
steps:
  a: {component: utils.echo, args: [--msg, hi]}
  b: {component: utils.echo, args: [--msg, there], depends_on: a}
""")
    out = torchx("pipeline", "run", "--dryrun", "flow.yaml").stdout
    assert "=== STEP a on local_cwd ===" in out and "=== STEP b on local_cwd, after a ===" in out
    assert "TORCHX_PIPELINE_STEP=b" in out
    assert torchx("list", "-s", "pipeline").stdout.count("pipeline://") == 0


def test_a_driver_that_cannot_restart_leaves_the_rest_not_run(torchx):
    # The pipeline's directory disappears while its driver is dead: no new driver can start there,
    # so the waiting step is marked not run and the pipeline ends once the running step has.
    work = torchx.cwd / "work"
    work.mkdir()
    (work / "flow.yaml").write_text("""
steps:
  first: {component: utils.sh, args: [sleep, "2"]}
  second: {component: utils.sh, args: [touch, second-ran], depends_on: first}
""")
    torchx.cwd = work
    handle = torchx("pipeline", "run", "flow.yaml").stdout.split()[0]
    torchx.cwd = work.parent
    torchx.wait_state(handle, {"RUNNING"}, timeout=30)
    pipeline_id = handle.rsplit("/", 1)[1]
    wait_for_driver(pipeline_id)
    assert kill_driver_and_watchdog(pipeline_id) == 2
    shutil.rmtree(work)
    status = torchx.wait_state(handle, {"FAILED", "SUCCEEDED", "CANCELLED"}, timeout=60)
    assert status["state"] == "FAILED", status
    assert "second not run: the pipeline's driver cannot start" in status["msg"], status["msg"]
    assert "work" in status["msg"]  # the directory it could not start in
