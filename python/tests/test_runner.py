"""torchx.runner against the real local scheduler: submit, follow, cancel, logs, errors."""

import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from torchx import specs
from torchx.runner import get_runner
from torchx.specs.finder import ComponentNotFoundException


def sh_app(script, name="sh", num_replicas=1):
    return specs.AppDef(
        name=name,
        roles=[
            specs.Role(
                name="worker",
                image="",
                entrypoint="bash",
                args=["-c", script],
                num_replicas=num_replicas,
                resource=specs.Resource(cpu=1, gpu=0, memMB=64),
            )
        ],
    )


def wait_for(pred, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return False


def test_run_wait_status_describe_logs_list_delete(tmp_path):
    runner = get_runner()
    app = sh_app('echo "out $TORCHX_RANK0_HOST"; echo err >&2', num_replicas=2)
    handle = runner.run(app, "local_cwd", cfg={"log_dir": str(tmp_path)})
    assert handle.startswith("local_cwd://torchx/sh-")
    status = runner.wait(handle, wait_interval=1)
    assert status.state == specs.AppState.SUCCEEDED
    assert [r.state for r in status.roles[0].replicas] == [specs.AppState.SUCCEEDED] * 2
    assert runner.status(handle).state == specs.AppState.SUCCEEDED
    described = runner.describe(handle)
    assert described.roles[0].args == app.roles[0].args and described.roles[0].num_replicas == 2
    assert "TORCHX_JOB_ID" in described.roles[0].env
    assert list(runner.log_lines(handle, "worker", k=1)) == ["out localhost\n", "err\n"]
    assert list(runner.log_lines(handle, "worker", 0, streams="stderr")) == ["err\n"]
    assert list(runner.log_lines(handle, "worker", 0, regex="^out")) == ["out localhost\n"]
    with pytest.raises(ValueError, match="invalid pattern"):
        runner.log_lines(handle, "worker", 0, regex="(")
    listed = {a.app_handle: a for a in runner.list("local_cwd")}
    assert listed[handle].state == specs.AppState.SUCCEEDED
    runner.delete(handle)
    assert runner.status(handle) is None and runner.describe(handle) is None


def test_unknown_app_and_bad_inputs():
    runner = get_runner()
    assert runner.status("local_cwd://torchx/does-not-exist") is None
    runner.cancel("local_cwd://torchx/does-not-exist")  # no-op, as TorchX
    with pytest.raises(specs.MalformedAppHandleException):
        runner.status("not a handle")
    with pytest.raises(KeyError, match="local_cwd"):
        runner.run(sh_app("true"), "no_such_scheduler")
    with pytest.raises(specs.InvalidRunConfigException, match="prepend_cwd"):
        runner.dryrun(sh_app("true"), "local_cwd", cfg={"prepend_cwd": "yes"})
    # A role without a resource: the local scheduler runs it (TorchX's LocalScheduler ignores
    # resources); a back-end that places replicas by resource refuses it, naming the role.
    no_resource = specs.AppDef("a", [specs.Role("r", "i", entrypoint="true")])
    assert "true" in str(runner.dryrun(no_resource, "local_cwd"))
    with pytest.raises(ValueError, match="role 'r': resource: no resource for role"):
        runner.dryrun(no_resource, "slurm")
    with pytest.raises(TypeError):
        runner.run("not an app", "local_cwd")
    with pytest.raises(ComponentNotFoundException, match="utils.echo"):
        runner.run_component("utils.ech", [], "local_cwd")
    with pytest.raises(ValueError, match="--msgg"):
        runner.run_component("utils.echo", ["--msgg", "x"], "local_cwd")


def test_dryrun_then_schedule():
    runner = get_runner()
    info = runner.dryrun(sh_app("exit 0"), "local", cfg={"prepend_cwd": True})
    assert info._scheduler == "local" and info._cfg["prepend_cwd"] is True
    assert "bash -c" in repr(info) and info._app.roles[0].env["TORCHX_JOB_ID"].endswith("${app_id}")
    handle = runner.schedule(info)
    assert runner.wait(handle).state == specs.AppState.SUCCEEDED


def test_run_component_with_list_and_dict_args(tmp_path):
    runner = get_runner()
    h1 = runner.run_component("utils.echo", ["--msg", "from list"], "local_cwd", cfg={"log_dir": str(tmp_path)})
    h2 = runner.run_component("utils.echo", {"msg": "from dict"}, "local_cwd", cfg={"log_dir": str(tmp_path)})
    for h, text in [(h1, "from list\n"), (h2, "from dict\n")]:
        assert runner.wait(h).state == specs.AppState.SUCCEEDED
        assert list(runner.log_lines(h, "echo")) == [text]


def test_failed_app_reports_failure_and_retries():
    runner = get_runner()
    app = sh_app("exit 3")
    app.roles[0].max_retries = 1
    status = runner.wait(runner.run(app, "local_cwd"))
    assert status.state == specs.AppState.FAILED and status.num_restarts == 1


def test_cancel_while_waiting_in_another_thread_releases_the_gil():
    runner = get_runner()
    handle = runner.run(sh_app("sleep 60"), "local_cwd")
    assert wait_for(lambda: runner.status(handle).state == specs.AppState.RUNNING)
    result = {}
    waiter = threading.Thread(target=lambda: result.setdefault("s", get_runner().wait(handle)))
    waiter.start()
    time.sleep(0.2)  # the waiter blocks inside the core; this thread still runs Python
    t0 = time.monotonic()
    runner.cancel(handle)
    waiter.join(timeout=30)
    assert not waiter.is_alive()
    assert result["s"].state == specs.AppState.CANCELLED
    assert time.monotonic() - t0 < 15


def test_handles_work_from_a_fresh_process():
    """Ax may keep only the handle: another process's runner can status and cancel it."""
    runner = get_runner()
    handle = runner.run(sh_app("sleep 60"), "local_cwd")
    code = (
        "import sys; from torchx.runner import get_runner; r = get_runner(); h = sys.argv[1];"
        "print(r.status(h).state.name); r.cancel(h); print(r.wait(h).state.name)"
    )
    out = subprocess.run([sys.executable, "-c", code, handle], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split()[-1] == "CANCELLED"
    assert runner.status(handle).state == specs.AppState.CANCELLED


def test_runner_introspection():
    runner = get_runner()
    assert runner.scheduler_backends()[:2] == ["local_cwd", "local"]
    opts = runner.scheduler_run_opts("local_cwd")
    assert opts.get("prepend_cwd").default is False
    assert set(runner.run_opts()) >= {"local_cwd", "local"}
    with get_runner() as r:
        assert "local_cwd" in repr(r)


def test_follow_logs_until_the_app_ends():
    runner = get_runner()
    handle = runner.run(sh_app("for i in 1 2 3; do echo line$i; sleep 0.2; done"), "local_cwd")
    lines = list(runner.log_lines(handle, "worker", should_tail=True))
    assert lines == ["line1\n", "line2\n", "line3\n"]


def test_schedulers_module():
    from torchx.schedulers import Stream, get_default_scheduler_name, get_scheduler_factories

    assert get_default_scheduler_name() == "local_cwd"
    factories = get_scheduler_factories()
    assert list(factories)[:2] == ["local_cwd", "local"]
    info = factories["local"]("session")
    assert info.run_opts().get("log_dir") is not None
    runner = get_runner()
    handle = runner.run(sh_app("echo o; echo e >&2"), "local_cwd")
    runner.wait(handle)
    assert list(runner.log_lines(handle, "worker", streams=Stream.STDERR)) == ["e\n"]


def test_scheduler_capabilities_come_from_the_core():
    from torchx._core import core

    assert "native_dependencies" in core().scheduler_capabilities("slurm")
    local = core().scheduler_capabilities("local_cwd")
    assert {"logs", "follow_logs", "list", "delete", "attempt_history"} <= set(local)
    assert "native_dependencies" not in local
    assert "composite" in core().scheduler_capabilities("pipeline")
    with pytest.raises(KeyError, match="unknown scheduler"):
        core().scheduler_capabilities("slurmm")


def test_workspace_is_refused_by_schedulers_without_workspaces(tmp_path):
    with pytest.raises(NotImplementedError, match="scheduler local_cwd does not support workspaces"):
        get_runner().dryrun(sh_app("true"), "local_cwd", workspace=str(tmp_path))


def test_runner_records_torchx_events_and_head_signatures(monkeypatch):
    from torchx.runner import events

    recorded = []
    monkeypatch.setattr(events, "record", lambda ev, destination="null": recorded.append(ev))
    with pytest.warns(UserWarning, match="session names are deprecated"):
        runner = get_runner("sess")
    assert runner.name() == "sess"
    app = specs.AppDef("ev", [specs.Role("r", "img", entrypoint="echo", resource=specs.Resource(1, 0, 64))])
    info = runner.run(app, "local_cwd", dryrun=True)
    assert isinstance(info, specs.AppDryRunInfo)
    handle = runner.run(app, "local_cwd")
    runner.wait(handle, wait_interval=0.1)
    assert any(r.app_id == handle.rpartition("/")[2] for r in runner.list("local_cwd", cfg={}))
    apis = [e.api for e in recorded]
    assert apis[:2] == ["dryrun", "run"] and "schedule" in apis and "wait" in apis and apis[-1] == "list"
    sched = next(e for e in recorded if e.api == "schedule")
    assert sched.app_id == handle.rpartition("/")[2] and sched.app_image == "img" and sched.wall_time_usec >= 0
    with pytest.raises(specs.MalformedAppHandleException):
        runner.describe("not a handle")
    failed = recorded[-1]
    assert failed.api == "describe" and failed.exception_type and failed.raw_exception
    assert events.TorchxEvent.deserialize(failed.serialize()) == failed


def test_runner_config_module(tmp_path, monkeypatch):
    import io

    from torchx.runner import config

    monkeypatch.delenv("TORCHXCONFIG", raising=False)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / ".torchxconfig").write_text(
        "[local_cwd]\nlog_dir = /first\nprepend_cwd = yes\n\n[component:utils.echo]\nmsg = hi\n[component:]\nx = y\n")
    (tmp_path / "b" / ".torchxconfig").write_text("[local_cwd]\nlog_dir = /second\nauto_set_cuda_visible_devices = None\n")
    dirs = [str(tmp_path / "a"), str(tmp_path / "b")]
    cfg = {"prepend_cwd": False}
    config.apply("local_cwd", cfg, dirs=dirs)
    assert cfg == {"prepend_cwd": False, "log_dir": "/first", "auto_set_cuda_visible_devices": None}
    assert config.load_sections("component", dirs) == {"utils.echo": {"msg": "hi"}}
    assert config.get_config("component", "utils.echo", "msg", dirs) == "hi"
    monkeypatch.setenv("TORCHXCONFIG", "")
    assert config.find_configs(dirs) == []  # TORCHXCONFIG="" reads no file
    monkeypatch.setenv("TORCHXCONFIG", str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError):
        config.find_configs(dirs)
    out = io.StringIO()
    config.dump(out, schedulers=["local_cwd"])
    back = {}
    config.load("local_cwd", io.StringIO(out.getvalue()), back)
    assert back["prepend_cwd"] is False and "[local_cwd]" in out.getvalue()
    with pytest.raises(ValueError, match="not a registered scheduler"):
        config.dump(io.StringIO(), schedulers=["nope"])


def test_role_workspace_reaches_the_core_and_projects_are_merged(tmp_path):
    from torchx.runner.api import _workspace_dir

    app = sh_app("true")
    app.roles[0].workspace = specs.Workspace({str(tmp_path): ""})
    # Role.workspace is what the Runner builds when no workspace argument is given (TorchX).
    with pytest.raises(NotImplementedError, match="scheduler local_cwd does not support workspaces"):
        get_runner().dryrun(app, "local_cwd")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.py").write_text("x")
    multi = specs.Workspace({str(tmp_path / "a"): "proj", str(tmp_path / "a" / "f.py"): "top.py"})
    with _workspace_dir(multi, None) as merged:
        assert (Path(merged) / "proj" / "f.py").read_text() == "x" and (Path(merged) / "top.py").is_file()
    assert not Path(merged).exists()
    second = specs.Role("b", "img", entrypoint="true", workspace=multi)
    with pytest.raises(ValueError, match=r"roles\[1\]\.workspace"):
        get_runner().dryrun(specs.AppDef("a", [sh_app("true").roles[0], second]), "local_cwd")


def test_scheduler_params_are_held_to_torchx_local_factory_on_the_core_backend():
    # TorchX's local factory refuses cache_size <= 0; the core's durable back-end keeps no such
    # cache, but the parameter is still checked rather than silently dropped.
    from torchx.runner import get_runner

    with pytest.raises(ValueError, match="cache_size"):
        get_runner(cache_size=-1).dryrun_component("utils.echo", ["--msg", "x"], "local_cwd")
    info = get_runner(cache_size=5).dryrun_component("utils.echo", ["--msg", "x"], "local_cwd")
    assert info.app.roles[0].args == ["x"]  # a valid cache_size runs as before


def test_extra_paths_given_to_get_runner_reach_the_replicas(tmp_path, monkeypatch):
    # TorchX's local scheduler factory takes extra_paths (put in front of PATH); given to
    # get_runner(), the replica finds a program that is only there.
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "torchx-test-only-tool").write_text("#!/bin/sh\necho found on the extra path \"$@\"\n")
    (tools / "torchx-test-only-tool").chmod(0o755)
    monkeypatch.setenv("TORCHX_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    with get_runner(extra_paths=[str(tools)]) as runner:
        handle = runner.run_component("utils.sh", ["torchx-test-only-tool", "x"], "local_cwd")
        assert runner.wait(handle, wait_interval=0.1).state == specs.AppState.SUCCEEDED
        assert list(runner.log_lines(handle, "sh")) == ["found on the extra path x\n"]
    with get_runner() as runner:  # without it the program is not found
        handle = runner.run_component("utils.sh", ["torchx-test-only-tool", "x"], "local_cwd")
        assert runner.wait(handle, wait_interval=0.1).state == specs.AppState.FAILED


@pytest.mark.parametrize("scheduler,payload,field", [
    ("local_docker", "{not json", "local_docker request: not a JSON object"),
    ("local_docker", '{"app_id": "a", "containers": [{"name": "n", "config": {}}]}', "containers[0].config.Image"),
    ("kubernetes", '{"namespace": "default", "job": {"metadata": {}}}', "job.metadata.name"),
    ("slurm", '{"cmd": ["sbatch"], "replicas": "x"}', "replicas"),
])
def test_an_edited_request_is_a_value_error_naming_the_field(scheduler, payload, field):
    # A Python scheduler class hands back the request it showed (and its caller may have edited):
    # a malformed one is refused before anything reaches the engine.
    from torchx._core import core
    from torchx.specs.api import app_to_core

    runner = core().Runner("torchx", None)
    with pytest.raises(ValueError, match=re.escape(field)):
        runner.schedule_request(scheduler, app_to_core(sh_app("true")), "app-1", payload)


def test_describe_native_reads_the_request_back(tmp_path):
    from torchx.schedulers.local_scheduler import PopenRequest, create_scheduler

    r = get_runner()
    handle = r.run(sh_app("sleep 30"), "local_cwd", {"log_dir": str(tmp_path)})
    try:
        info = r.describe_native(handle)
        assert info is not None and info._scheduler == "local_cwd"
        assert "cmd: bash -c 'sleep 30'" in str(info.request)
        plan = __import__("json").loads(info._core.payload)
        assert plan["app_id"] == handle.rsplit("/", 1)[1] and plan["replicas"][0]["argv"] == ["bash", "-c", "sleep 30"]
        # TorchX's scheduler class answers with its own request type, PopenRequest.
        sched = create_scheduler("torchx")
        native = sched.describe_native(handle.rsplit("/", 1)[1])
        assert isinstance(native.request, PopenRequest)
        assert native.request.role_params["worker"][0].args == ["bash", "-c", "sleep 30"]
        assert r.describe_native("local_cwd://torchx/nope-1") is None
    finally:
        r.cancel(handle)


def test_one_runner_shared_by_threads_runs_and_waits_without_error():
    # A thread pool around one runner (Ax's parallelism): 8 threads, each 50 run()+wait() on
    # the same Runner, 10 rounds. Every app ends as its script says; no call raises, crashes or
    # hangs (each round is bounded by the join below).
    import os
    rounds = int(os.environ.get("TORCHX_SHARED_RUNNER_ROUNDS", "10"))
    ok = specs.AppDef("ok", roles=[specs.Role("r", image="", entrypoint="true")])
    bad = specs.AppDef("bad", roles=[specs.Role("r", image="", entrypoint="false")])
    runner = get_runner()
    for round_ in range(rounds):
        errors, states = [], []

        def worker(t, errors=errors, states=states):
            try:
                for i in range(50):
                    app = bad if (t + i) % 5 == 0 else ok
                    handle = runner.run(app, "local_cwd")
                    status = runner.wait(handle, wait_interval=0.05)
                    states.append((app.name, status.state if status else None, handle))
            except BaseException as e:  # noqa: BLE001 - every error is the test's finding
                errors.append(repr(e))

        threads = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=300)
        assert not any(th.is_alive() for th in threads), f"round {round_}: a thread hung"
        assert errors == [], f"round {round_}: {errors[:3]}"
        assert len(states) == 400, round_
        for name, state, handle in states:
            want = specs.AppState.FAILED if name == "bad" else specs.AppState.SUCCEEDED
            assert state == want, (round_, handle, state)
