"""torchx.schedulers.ray_scheduler without a cluster: TorchX 0.7.0's names, and the core's dry run
as 0.7.0's RayJob (one RayActor per replica, macros applied)."""

import pytest

from torchx.schedulers import ray_scheduler as rs
from torchx.specs import AppDef, Resource, Role, macros


def app(image):
    return AppDef("train", [Role("trainer", image=image, entrypoint="python3", num_replicas=2,
                                 args=["-m", "train", "--id", macros.app_id, "--r", macros.replica_id],
                                 env={"FOO": "bar"}, resource=Resource(cpu=2, gpu=0, memMB=1024))])


def test_names_of_torchx_0_7_0():
    s = rs.create_scheduler("s")
    assert isinstance(s, rs.RayScheduler) and s.backend == "ray" and rs.has_ray()
    opts = s.run_opts()
    for name in ("cluster_config_file", "cluster_name", "dashboard_address", "requirements"):
        assert opts.get(name) is not None, name


def test_dryrun_is_a_ray_job(tmp_path, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    info = rs.create_scheduler("s").submit_dryrun(app(str(tmp_path)), {"dashboard_address": "10.0.0.1:8265"})
    job = info.request
    assert isinstance(job, rs.RayJob)
    assert job.dashboard_address == "10.0.0.1:8265" and job.working_dir == str(tmp_path)
    assert job.app_id.startswith("train-")
    assert [a.command for a in job.actors] == [["python3", "-m", "train", "--id", job.app_id, "--r", str(i)]
                                               for i in range(2)]
    assert all(a.env["FOO"] == "bar" and a.num_cpus == 2 for a in job.actors)


def test_an_image_that_is_not_a_directory_is_refused(tmp_path):
    with pytest.raises(Exception, match="is not a local directory"):
        rs.create_scheduler("s").submit_dryrun(app("ghcr.io/pytorch/torchx:0.7.0"), {})
