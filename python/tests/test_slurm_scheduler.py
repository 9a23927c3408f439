"""torchx.schedulers.slurm_scheduler without a cluster: the request the core builds, as TorchX's
SlurmBatchRequest that callers edit, its script, the state table and version(). The real cluster
is tests/integration/slurm (a subclassing plugin included)."""

import os
from unittest import mock

import pytest

from torchx.runner import Runner
from torchx.schedulers import slurm_scheduler
from torchx.schedulers.slurm_scheduler import SlurmBatchRequest, SlurmScheduler, appstate_from_slurm_state, create_scheduler
from torchx.specs import AppDef, AppState, Resource, Role


@pytest.fixture(autouse=True)
def fake_sinfo(tmp_path, monkeypatch):
    # The core asks `sinfo` for the Slurm version and the partition's memory: answer as a 24.11
    # cluster would, so the tests never wait on a real (or absent) controller.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    sinfo = bin_dir / "sinfo"
    sinfo.write_text('#!/bin/sh\ncase "$1" in --version) echo "slurm 24.11.1";; *) echo "debug*,64000";; esac\n')
    sinfo.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")


def app():
    return AppDef("train", [Role("trainer", image="/img", entrypoint="python", args=["-c", "print(1)"],
                                 num_replicas=2, resource=Resource(cpu=2, gpu=0, memMB=2048))])


def test_dryrun_request_is_editable_and_materializes_the_edit():
    sched = create_scheduler("s")
    assert isinstance(sched, SlurmScheduler)
    info = sched.submit_dryrun(app(), {"partition": "debug", "account": "proj"})
    req = info.request
    assert isinstance(req, SlurmBatchRequest)
    assert req.cmd[:2] == ["sbatch", "--parsable"] and "--account=proj" in req.cmd
    assert list(req.replicas) == ["trainer-0", "trainer-1"]
    assert "--partition=debug" in req.replicas["trainer-1"].sbatch_opts
    assert "--mem=2048" in req.replicas["trainer-1"].sbatch_opts  # the partition has the memory
    req.replicas["trainer-0"].sbatch_opts.append("--nice=5")
    script = req.materialize()
    assert "#SBATCH --job-name=trainer-0" in script and "--nice=5" in script
    assert str(info).startswith("sbatch --parsable")
    req.replicas["trainer-0"].command = []
    with pytest.raises(ValueError, match=r"replicas\[0\]\.command: empty"):
        req.materialize()


def test_workspace_and_images_to_push_survive_the_round_trip():
    req = SlurmBatchRequest(cmd=["sbatch", "--parsable"], replicas={}, workspace="/ws",
                            images_to_push={"reg.example.com/t/x:abc": ("reg.example.com/t/x", "abc")})
    back = SlurmBatchRequest.from_json(req.to_json())
    assert back.workspace == "/ws"
    assert back.images_to_push == {"reg.example.com/t/x:abc": ("reg.example.com/t/x", "abc")}
    assert SlurmBatchRequest.from_json(SlurmBatchRequest(cmd=["sbatch"], replicas={}).to_json()).images_to_push is None
    assert create_scheduler("s").run_opts().get("image_repo") is not None
    quiet = create_scheduler("s").run_opts().get("quiet")  # torchx-nightly's, from its docker workspace
    assert quiet is not None and quiet.opt_type is bool and quiet.default is False


def test_runner_over_the_python_class_injects_the_job_id():
    with Runner("sess", {"slurm": create_scheduler}) as runner:
        info = runner.dryrun(app(), "slurm", {"nomem": True})
        script = info.request.materialize()
        assert "TORCHX_JOB_ID=slurm://sess/" in script
        assert "--mem=" not in script


def test_states_and_version():
    assert appstate_from_slurm_state("RUNNING") == AppState.RUNNING
    assert appstate_from_slurm_state("CANCELLED by 0") == AppState.CANCELLED
    states = slurm_scheduler.SLURM_STATES  # the core's table, whole
    assert states["COMPLETED"] == AppState.SUCCEEDED and states["REVOKED"] == AppState.FAILED
    assert all(appstate_from_slurm_state(name) == state for name, state in states.items())
    slurm_scheduler.version.cache_clear()
    with mock.patch("subprocess.check_output", return_value="slurm 24.11.1\n"):
        assert slurm_scheduler.version() == (24, 11)
    slurm_scheduler.version.cache_clear()
    with mock.patch("subprocess.check_output", side_effect=FileNotFoundError("sinfo")):
        with pytest.warns(RuntimeWarning, match="sinfo --version"):
            assert slurm_scheduler.version() == (24, 5)
    slurm_scheduler.version.cache_clear()


def test_flags_read_and_write_like_torchx_options():
    info = create_scheduler("s").submit_dryrun(app(), {"qos": "low"})
    opts = info.request.replicas["trainer-0"].sbatch_opts
    assert "qos" in opts and opts["qos"] == "low" and opts["requeue"] is None
    opts["qos"] = "high"
    opts["comment"] = "x"
    del opts["mem"]
    assert "mem" not in opts and "--qos=high" in opts and opts[-1] == "--comment=x"
    with pytest.raises(KeyError):
        opts["nope"]
    script = info.request.materialize()
    assert "--qos=high" in script and "--mem=" not in script.split("#SBATCH hetjob")[0]
