"""Runner.run(..., managed=True): the CLI's `torchx run --managed` from Python, through the core.
The handle is answered like any app's (wait, status, describe, log, cancel), its attempts carry the
checkpoint and recovery variables, and bad options raise before anything is recorded."""

import os

import pytest

from torchx import specs
from torchx.runner import get_runner
from torchx.specs import AppState


def sh(script: str) -> specs.AppDef:
    return specs.AppDef(name="m", roles=[specs.Role(name="sh", image=os.getcwd(), entrypoint="sh",
                                                    args=["-c", script])])


def test_a_user_error_recovered_when_asked_with_the_same_checkpoint_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = get_runner()
    script = 'echo "$TORCHX_RECOVERY_COUNT $TORCHX_CHECKPOINT_DIR"; [ "$TORCHX_RECOVERY_COUNT" -ge 1 ]'
    handle = runner.run(sh(script), "local_cwd", managed=True, recover_on=["user_error"],
                        checkpoint_dir=str(tmp_path / "ckpt"))
    assert handle.startswith("managed://torchx/m-")
    status = runner.wait(handle, wait_interval=0.2)
    assert status.state == AppState.SUCCEEDED, status
    assert status.num_restarts == 1
    lines = list(runner.log_lines(handle, "sh", 0))
    assert [line.strip() for line in lines] == [f"[attempt 0] 0 {tmp_path / 'ckpt'}", f"[attempt 1] 1 {tmp_path / 'ckpt'}"]
    assert (tmp_path / "ckpt").is_dir()


def test_failover_given_as_text_or_pairs_dryrun_and_bad_options(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = get_runner()
    plan = runner.run(sh("true"), "local_cwd", managed=True, dryrun=True,
                      failover=["local_cwd:log_dir=" + str(tmp_path / "logs"), ("local_cwd", {"prepend_cwd": True})])
    assert "=== TARGET 0: local_cwd ===" in plan
    assert f"=== TARGET 1: local_cwd (log_dir={tmp_path / 'logs'}) ===" in plan
    assert "=== TARGET 2: local_cwd (prepend_cwd=true) ===" in plan
    with pytest.raises(ValueError, match=r"run\(managed=True\)\.recover_on: unknown cause `gremlins`"):
        runner.run(sh("true"), "local_cwd", managed=True, recover_on=["gremlins"])
    with pytest.raises(Exception, match="bogus"):
        runner.run(sh("true"), "local_cwd", managed=True, failover=["local_cwd:bogus=1"])
    assert not (tmp_path / ".torchx").exists()  # nothing made
    # Any text the app holds reaches the core as written (not as JSON's surrogate escapes).
    plan = runner.run(sh("echo \U0001F600 é"), "local_cwd", managed=True, dryrun=True)
    assert "\U0001F600 é" in plan


def test_cancel_stops_the_attempt(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = get_runner()
    handle = runner.run(sh("sleep 60"), "local_cwd", managed=True)
    runner.cancel(handle)
    status = runner.wait(handle, wait_interval=0.2)
    assert status.state == AppState.CANCELLED, status
    described = runner.describe(handle)
    assert described is not None and described.roles[0].name == "sh"


def test_a_single_cause_or_target_is_one_not_its_characters(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = get_runner()
    plan = runner.run(sh("true"), "local_cwd", managed=True, dryrun=True, recover_on="time_limit",
                      failover="local_cwd")
    assert "time_limit" in plan and "=== TARGET 1: local_cwd ===" in plan
    plan = runner.run(sh("true"), "local_cwd", managed=True, dryrun=True, failover=("local_cwd", {}))
    assert "=== TARGET 1: local_cwd ===" in plan
    with pytest.raises(ValueError, match="failover: 3 is neither"):
        runner.run(sh("true"), "local_cwd", managed=True, failover=[3])
    with pytest.raises(ValueError, match="is not a duration"):
        runner.run(sh("true"), "local_cwd", managed=True, start_timeout=float("nan"))
