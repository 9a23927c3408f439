"""torchx.schedulers.local_scheduler: TorchX's LocalScheduler class over the core's durable local
back-end: the request it dry-runs is what runs (edits included), apps are visible to the core's
Runner and the CLI, and a plugin that wraps and subclasses it works through both."""

import os
import pathlib
import subprocess
import sys
import time

import pytest

from torchx.runner import Runner, get_runner
from torchx.schedulers.local_scheduler import (
    LocalDirectoryImageProvider,
    LocalScheduler,
    Opts,
    PopenRequest,
    create_scheduler,
)
from torchx.specs import AppDef, AppState, Role, UnknownSchedulerException

FIXTURES = pathlib.Path(__file__).resolve().parent / "plugin_fixtures_local"


@pytest.fixture
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHX_STATE_DIR", str(tmp_path / "state"))
    return tmp_path


def wait(scheduler, app_id, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        desc = scheduler.describe(app_id)
        if desc is not None and desc.state in (AppState.SUCCEEDED, AppState.FAILED, AppState.CANCELLED):
            return desc
        time.sleep(0.05)
    raise TimeoutError(app_id)


def sh_app(tmp_path, script, replicas=1, name="app"):
    return AppDef(name, [Role("r", image=str(tmp_path), entrypoint="sh", args=["-c", script], num_replicas=replicas)])


def test_dryrun_request_is_editable_and_the_edit_runs(state_dir, tmp_path):
    sched = LocalScheduler("s", LocalDirectoryImageProvider)
    try:
        info = sched.submit_dryrun(sh_app(tmp_path, "echo v=$EDITED r=${replica_id} pwd=$(pwd)", 2), Opts(log_dir=str(tmp_path / "logs")))
        request = info.request
        assert isinstance(request, PopenRequest)
        assert [p.args[:2] for p in request.role_params["r"]] == [["sh", "-c"], ["sh", "-c"]]
        assert request.role_params["r"][1].env["TORCHELASTIC_ERROR_FILE"].endswith("/r/1/error.json")
        assert not os.path.exists(request.log_dir), "a dry run creates nothing"
        for p in request.role_params["r"]:
            p.env["EDITED"] = "yes"
        app_id = sched.schedule(info)
        assert wait(sched, app_id).state == AppState.SUCCEEDED
        lines = sorted(sched.log_iter(app_id, "r", k=1))
        assert lines == [f"v=yes r=1 pwd={tmp_path}\n"]
        # the same app through the core's Runner (another process could do the same)
        status = get_runner().status(f"local://s/{app_id}")
        assert status is not None and status.state == AppState.SUCCEEDED
    finally:
        sched.close()


def test_bad_request_edits_and_options_are_refused(state_dir, tmp_path):
    with pytest.raises(ValueError, match="cache_size"):
        LocalScheduler("s", LocalDirectoryImageProvider, cache_size=0)
    sched = LocalScheduler("s", LocalDirectoryImageProvider)
    info = sched.submit_dryrun(sh_app(tmp_path, "true"), Opts(log_dir=str(tmp_path / "logs")))
    info.request.role_params["r"][0].stdout = str(tmp_path / "elsewhere.log")
    with pytest.raises(ValueError, match=r"role_params\['r'\]\[0\]\.stdout"):
        sched.schedule(info)
    with pytest.raises(ValueError, match="image"):
        sched.submit_dryrun(AppDef("a", [Role("r", image="relative/dir", entrypoint="true")]), {})
    sched.close()


def test_cache_and_close(state_dir, tmp_path):
    sched = LocalScheduler("s", LocalDirectoryImageProvider, cache_size=1)
    first = sched.submit(sh_app(tmp_path, "true"), {})
    assert wait(sched, first).state == AppState.SUCCEEDED
    running = sched.submit(sh_app(tmp_path, "sleep 60"), {})  # evicts the finished one
    assert sched.describe(first) is None
    with pytest.raises(IndexError, match="cache_size"):
        sched.submit(sh_app(tmp_path, "true"), {})
    tmp_logs = list(sched._tmp_log_dirs)
    sched.close()  # stops what it started and removes its temporary log directories
    assert get_runner().status(f"local://s/{running}").state == AppState.CANCELLED
    assert not any(os.path.exists(d) for d in tmp_logs)
    sched.close()


def test_runner_with_local_scheduler_factory(state_dir, tmp_path):
    with Runner("sess", {"local_dir": create_scheduler}, scheduler_params={"image_provider_class": LocalDirectoryImageProvider}) as runner:
        assert runner.scheduler_backends() == ["local_dir"]
        handle = runner.run(sh_app(tmp_path, "echo job=$TORCHX_JOB_ID"), "local_dir", {"log_dir": str(tmp_path / "l")})
        assert handle.startswith("local_dir://sess/app-")
        assert runner.wait(handle, wait_interval=0.05).state == AppState.SUCCEEDED
        assert list(runner.log_lines(handle, "r")) == [f"job={handle}\n"]
        assert runner.describe(handle).roles[0].args == ["-c", "echo job=$TORCHX_JOB_ID"]
    with Runner("sess", {}) as nothing:  # no factories: no schedulers, as TorchX
        assert nothing.scheduler_backends() == []
        with pytest.raises(UnknownSchedulerException):
            nothing.dryrun(sh_app(tmp_path, "true"), "local_cwd")


def test_wrapping_plugin_through_python_and_the_cli(state_dir, tmp_path, torchx_bin):
    env = dict(os.environ, PYTHONPATH=str(FIXTURES), TORCHX_STATE_DIR=str(tmp_path / "state"))
    code = (
        "from torchx.runner import get_runner\n"
        "r = get_runner()\n"
        "h = r.run_component('utils.sh', ['sh', '-c', 'echo tag=$WRAPPED_BY'], 'wrapped_local')\n"
        "print(r.wait(h, wait_interval=0.05).state.name)\n"
        "print(''.join(r.log_lines(h, 'sh')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["SUCCEEDED", "tag=wrapped_local"]

    run = subprocess.run([torchx_bin, "run", "--wait", "-s", "wrapped_local", "utils.sh", "sh", "-c", "echo tag=$WRAPPED_BY"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    handle = run.stdout.strip().splitlines()[0]
    assert handle.startswith("wrapped_local://torchx/sh-")
    log = subprocess.run([torchx_bin, "log", handle], env=env, capture_output=True, text=True, timeout=120)
    assert "tag=wrapped_local" in log.stdout, log.stderr
    status = subprocess.run([torchx_bin, "status", handle], env=env, capture_output=True, text=True, timeout=120)
    assert "SUCCEEDED" in status.stdout, status.stderr


def test_log_lines_since_on_local_cwd_warns_as_torchx_and_returns_every_line(state_dir, tmp_path):
    # local_cwd's lines carry no time: TorchX warns and returns them all (the CLI refuses instead).
    runner = get_runner()
    handle = runner.run(sh_app(tmp_path, "echo one; echo two"), "local_cwd")
    assert runner.wait(handle, wait_interval=0.05).state == AppState.SUCCEEDED
    with pytest.warns(UserWarning, match="local_cwd, whose log lines carry no time: they are ignored"):
        lines = list(runner.log_lines(handle, "r", since=time.time() + 3600))
    assert lines == ["one\n", "two\n"]
