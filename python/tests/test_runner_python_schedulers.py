"""Python scheduler objects given to a Runner are driven by the core's run path: the core
validates, puts TorchX's variables in every role, resolves options, waits, cancels live apps only
and checks logs; the object's own hooks do the rest with the caller's objects."""

import concurrent.futures
import datetime
import json
from typing import Any, Dict, List, Optional

import pytest

from torchx import specs
from torchx.runner import Runner
from torchx.schedulers.api import DescribeAppResponse, ListAppResponse, Scheduler
from torchx.specs import AppDryRunInfo, AppState, UnknownAppException, UnknownSchedulerException


class Refused(Exception):
    """A scheduler's own exception: it must reach the caller unchanged."""


class Recording(Scheduler):
    """Apps live in memory; every hook records what it was given."""

    def __init__(self, session_name: str) -> None:
        super().__init__("recording", session_name)
        self.calls: List[str] = []
        self.apps: Dict[str, AppState] = {}
        self.submitted: Optional[specs.AppDef] = None
        self.log_args: Any = None
        self.refuse = False

    def _run_opts(self) -> specs.runopts:
        opts = specs.runopts()
        opts.add("queue", type_=str, default="default", help="where to run")
        return opts

    def _validate(self, app: specs.AppDef, scheduler: str, cfg: Any) -> None:
        self.calls.append("_validate")
        if self.refuse:
            raise Refused(f"{scheduler} refuses {app.name}")

    def _submit_dryrun(self, app: specs.AppDef, cfg: Any) -> AppDryRunInfo:
        self.calls.append(f"_submit_dryrun queue={cfg['queue']}")
        self.submitted = app
        return AppDryRunInfo({"app": app.name, "queue": cfg["queue"]}, repr)

    def schedule(self, dryrun_info: AppDryRunInfo) -> str:
        app_id = f"{dryrun_info.request['app']}-{len(self.apps)}"
        self.apps[app_id] = AppState.RUNNING
        return app_id

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        self.calls.append("describe")
        state = self.apps.get(app_id)
        return None if state is None else DescribeAppResponse(app_id=app_id, state=state)

    def list(self, cfg: Any = None) -> List[ListAppResponse]:
        return [ListAppResponse(app_id=a, state=s) for a, s in self.apps.items()]

    def _cancel_existing(self, app_id: str) -> None:
        self.calls.append(f"cancel {app_id}")
        self.apps[app_id] = AppState.CANCELLED

    def log_iter(self, app_id, role_name, k=0, regex=None, since=None, until=None, should_tail=False, streams=None):
        self.log_args = (app_id, role_name, k, regex, since, until, should_tail, streams)
        return iter(["no newline", "QPS 3\n"])


def app(name: str = "trainer", **role: Any) -> specs.AppDef:
    fields = dict(name="worker", image="img", entrypoint="python", args=["-m", "train"], resource=specs.Resource(1, 0, 64))
    fields.update(role)
    return specs.AppDef(name, roles=[specs.Role(**fields)])


@pytest.fixture
def runner_and_sched():
    made: List[Recording] = []

    def factory(session_name: str, **kwargs: Any) -> Recording:
        made.append(Recording(session_name))
        return made[-1]

    with Runner("sess", {"rec": factory}) as runner:
        yield runner, lambda: made[0]


def test_the_core_runs_the_template_and_the_object_its_hooks(runner_and_sched, monkeypatch):
    runner, sched = runner_and_sched
    monkeypatch.setenv("TORCHX_TRACKERS", "fsspec")
    monkeypatch.setenv("TORCHX_TRACKER_FSSPEC_CONFIG", "file:///tmp/runs")
    info = runner.dryrun(app(), "rec", {"queue": "gpu"}, parent_run_id="exp-1")
    assert info.request == {"app": "trainer", "queue": "gpu"}  # the object's own request, not text
    env = sched().submitted.roles[0].env
    assert env["TORCHX_JOB_ID"] == "rec://sess/${app_id}"
    assert (env["TORCHX_PARENT_RUN_ID"], env["TORCHX_TRACKERS"]) == ("exp-1", "fsspec")
    assert env["TORCHX_TRACKER_FSSPEC_CONFIG"] == "file:///tmp/runs"
    assert sched().calls == ["_validate", "_submit_dryrun queue=gpu"]

    info.request["queue"] = "edited"  # the caller may edit the request before schedule
    handle = runner.schedule(info)
    assert handle == "rec://sess/trainer-0"
    assert runner.status(handle).state == AppState.RUNNING
    assert runner.describe(handle).roles[0].args == ["-m", "train"]  # as submitted
    assert [(a.app_handle, a.state) for a in runner.list("rec")] == [(handle, AppState.RUNNING)]

    sched().calls.clear()
    runner.cancel(handle)
    runner.cancel(handle)  # the core describes first: a finished app is not cancelled again
    assert sched().calls == ["describe", f"cancel {handle.rsplit('/', 1)[1]}", "describe"]
    assert runner.wait(handle, wait_interval=0.01).state == AppState.CANCELLED


def test_options_are_the_objects_and_resolved_by_the_core(runner_and_sched):
    runner, sched = runner_and_sched
    assert runner.scheduler_run_opts("rec").get("queue").default == "default"
    runner.dryrun(app(), "rec")
    assert sched().calls[-1] == "_submit_dryrun queue=default"
    with pytest.raises(ValueError, match="queue"):
        runner.dryrun(app(), "rec", {"queue": 3})


def test_the_objects_exception_reaches_the_caller_unchanged(runner_and_sched):
    runner, sched = runner_and_sched
    runner.scheduler_run_opts("rec")  # made
    sched().refuse = True
    with pytest.raises(Refused, match="rec refuses trainer"):
        runner.dryrun(app(), "rec")
    with pytest.raises(ValueError, match="entrypoint"):  # TorchX's Runner checks stay the core's
        runner.dryrun(app(entrypoint=""), "rec")


def test_unresolved_overrides_stay_the_callers(runner_and_sched):
    runner, sched = runner_and_sched
    future: "concurrent.futures.Future[str]" = concurrent.futures.Future()  # never resolved
    role_app = app(overrides={"image": future})
    runner.dryrun(role_app, "rec")
    submitted = sched().submitted.roles[0]
    assert submitted is not role_app.roles[0]
    assert submitted.overrides is role_app.roles[0].overrides
    assert "TORCHX_JOB_ID" not in role_app.roles[0].env  # the caller's app is not changed


def test_logs_go_to_the_object_with_the_callers_arguments(runner_and_sched):
    runner, sched = runner_and_sched
    handle = runner.run(app(), "rec")
    since = datetime.datetime(2026, 11, 26, 8, 30, 15, 123456)
    lines = list(runner.log_lines(handle, "worker", 0, "QPS.*", since=since))
    assert lines == ["no newline", "QPS 3\n"]  # the object filters; lines are kept as it gave them
    assert sched().log_args == (handle.rsplit("/", 1)[1], "worker", 0, "QPS.*", since, None, False, None)
    with pytest.raises(UnknownAppException):
        list(runner.log_lines("rec://sess/missing", "worker"))


def test_unknown_scheduler_is_torchxs_exception_and_a_key_error(runner_and_sched):
    runner, _ = runner_and_sched
    with pytest.raises(UnknownSchedulerException, match="Valid choices: rec") as raised:
        runner.dryrun(app(), "local_cwd")
    assert isinstance(raised.value, KeyError) and raised.value.scheduler_backend == "local_cwd"


def test_configured_trackers_are_the_cores_reading(tmp_path, monkeypatch):
    from torchx.tracker import get_configured_trackers

    config = tmp_path / ".torchxconfig"
    config.write_text("[torchx:tracker]\nmlflow =\nfsspec =\n\n[tracker:fsspec]\nconfig = file:///runs\n")
    monkeypatch.setenv("TORCHXCONFIG", str(config))
    monkeypatch.delenv("TORCHX_TRACKERS", raising=False)
    assert get_configured_trackers() == {"mlflow": None, "fsspec": "file:///runs"}
    monkeypatch.setenv("TORCHX_TRACKERS", "fsspec, fsspec,custom")
    monkeypatch.setenv("TORCHX_TRACKER_CUSTOM_CONFIG", json.dumps({"k": 1}))
    assert get_configured_trackers() == {"fsspec": "file:///runs", "custom": '{"k": 1}'}


def test_a_multi_workspace_scheduler_object_builds_with_the_selected_builder(tmp_path):
    from torchx.workspace import MultiWorkspaceMixin, WorkspaceMixin

    class Tagging(WorkspaceMixin):
        def __init__(self, tag: str) -> None:
            super().__init__()
            self.tag = tag

        def build_workspace_and_update_role(self, role, workspace, cfg):
            role.image = f"{role.image}:{self.tag}"

    class TwoWays(MultiWorkspaceMixin, Recording):
        def __init__(self, session_name: str) -> None:
            super().__init__(session_name)
            self.builders = {"dir": Tagging("dir"), "image": Tagging("image")}

        def workspace_builders(self):
            return self.builders

    made: List[TwoWays] = []

    def factory(session_name: str, **kwargs: Any) -> TwoWays:
        made.append(TwoWays(session_name))
        return made[-1]

    (tmp_path / "train.py").write_text("print(1)")
    with Runner("sess", {"two": factory}) as runner:
        assert runner.scheduler_run_opts("two").get("workspace_type").default == "dir"
        runner.dryrun(app(), "two", {"workspace_type": "image"}, workspace=str(tmp_path))
        assert made[0].submitted.roles[0].image == "img:image"
        runner.dryrun(app(), "two", {}, workspace=str(tmp_path))
        assert made[0].submitted.roles[0].image == "img:dir"
        with pytest.raises(ValueError, match="unknown workspace_type `zip`"):
            runner.dryrun(app(), "two", {"workspace_type": "zip"}, workspace=str(tmp_path))


def test_an_empty_mapping_is_no_scheduler_even_with_local_parameters():
    with Runner("sess", {}, scheduler_params={"extra_paths": ["/opt/bin"]}) as runner:
        assert runner.scheduler_backends() == []
        with pytest.raises(UnknownSchedulerException):
            runner.dryrun(app(), "local_cwd")
