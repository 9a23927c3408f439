"""TorchX's private names that NeMo-Run (and tools like it) reach into, kept as compatibility
shims (docs/compatibility.md): Runner._scheduler, torchx.components.dist._noquote/_args_join,
torchx.schedulers.docker_scheduler._to_str; and the scheduler factories TorchX tools iterate hold
only schedulers an AppDef can be submitted to."""

import pytest

from torchx.components.dist import _args_join, _noquote
from torchx.runner import Runner, get_runner
from torchx.schedulers import get_scheduler_factories
from torchx.schedulers.api import Scheduler
from torchx.schedulers.docker_scheduler import _to_str
from torchx.schedulers.local_scheduler import LocalScheduler
from torchx.schedulers.slurm_scheduler import SlurmScheduler


def test_runner_scheduler_gives_the_torchx_class_once_per_runner():
    with get_runner() as runner:
        slurm = runner._scheduler("slurm")
        assert isinstance(slurm, SlurmScheduler) and isinstance(slurm, Scheduler)
        assert slurm.session_name == "torchx"
        assert runner._scheduler("slurm") is slurm
        local = runner._scheduler("local_cwd")
        assert isinstance(local, LocalScheduler)
        assert "log_dir" in {name for name, _ in local.run_opts()}


def test_runner_scheduler_refuses_an_unknown_name_as_torchx_does():
    with get_runner() as runner:
        with pytest.raises(KeyError, match="Undefined scheduler backend: nope. Use one of: .*local_cwd"):
            runner._scheduler("nope")


def test_runner_scheduler_with_given_factories_uses_them():
    made = []

    class Mine:
        def close(self):
            pass

    def factory(session_name, **kwargs):
        made.append(session_name)
        return Mine()

    with Runner("torchx", scheduler_factories={"mine": factory}) as runner:
        assert runner._scheduler("mine") is runner._scheduler("mine")
        assert made == ["torchx"]
        with pytest.raises(KeyError, match="Use one of: \\['mine'\\]"):
            runner._scheduler("slurm")


def test_noquote_arguments_pass_through_args_join_unquoted():
    endpoint = _noquote("$${TORCHX_RANK0_HOST:=localhost}:29500")
    assert isinstance(endpoint, str)
    assert _args_join(["torchrun", "--rdzv_endpoint", endpoint, "a b"]) == (
        "torchrun --rdzv_endpoint $${TORCHX_RANK0_HOST:=localhost}:29500 'a b'")


def test_docker_to_str_decodes_bytes_and_keeps_text():
    assert _to_str(b"caf\xc3\xa9") == "café"
    assert _to_str("x") == "x"


def test_scheduler_factories_leave_the_pipeline_pseudo_scheduler_out():
    names = list(get_scheduler_factories())
    assert "pipeline" not in names
    assert names[0] == "local_cwd" and "slurm" in names


def test_validate_takes_torchx_0_7_0s_two_arguments():
    # NeMo-Run's runner calls sched._validate(app, scheduler), 0.7.0's signature.
    from torchx import specs
    from torchx.schedulers.local_scheduler import create_scheduler

    app = specs.AppDef("a", [specs.Role("r", "", entrypoint="true", resource=specs.Resource(1, 0, 64))])
    sched = create_scheduler("torchx")
    try:
        sched._validate(app, "local_cwd")
    finally:
        sched.close()


def test_a_local_scheduler_subclass_that_skips_init_still_works():
    # NeMo-Run's PersistentLocalScheduler sets 0.7.0's attributes itself and never calls
    # LocalScheduler.__init__.
    from torchx.schedulers.local_scheduler import CWDImageProvider

    class Persistent(LocalScheduler):
        def __init__(self, session_name: str) -> None:
            self.backend = "local"
            self.session_name = session_name
            self._apps = {}
            self._image_provider_class = CWDImageProvider
            self._cache_size = 100
            self._extra_paths = []
            self._base_log_dir = None
            self._created_tmp_log_dir = False

    sched = Persistent("torchx")
    assert sched.describe("nope-123") is None
    sched.close()


class _Container:
    def __init__(self, status: str, exit_code: int) -> None:
        self.status = status
        self.attrs = {"State": {"ExitCode": exit_code}}


def test_docker_scheduler_keeps_torchx_0_7_0s_client_and_state_helpers():
    from torchx.schedulers.docker_scheduler import DockerScheduler
    from torchx.specs import AppState

    client = object()
    sched = object.__new__(DockerScheduler)  # as NeMo-Run's tests make one
    sched._DockerWorkspaceMixin__docker_client = client
    assert sched._docker_client is client
    sched._docker_client = "other"
    assert sched._DockerWorkspaceMixin__docker_client == "other"
    given = DockerScheduler("torchx", docker_client=client)
    assert given._docker_client is client
    cases = {("running", 0): AppState.RUNNING, ("exited", 0): AppState.SUCCEEDED, ("exited", 3): AppState.FAILED,
             ("created", 0): AppState.SUBMITTED, ("paused", 0): AppState.PENDING, ("dead", 0): AppState.FAILED}
    for (status, code), state in cases.items():
        assert given._get_app_state(_Container(status, code)) == state, (status, code)
