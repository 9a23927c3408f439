"""`torchx ui`'s REST API over the project's Slurm cluster (scripts/engines/slurm-up.sh): slurm
apps listed beside local_cwd's, described, their logs read, cancelled.

Skips without sbatch unless TORCHX_REQUIRE_ENGINES names slurm."""

import os
import shutil
import subprocess

import pytest

from ui_server import UiServer, app_path

if shutil.which("sbatch") is None or subprocess.run(["sinfo"], capture_output=True).returncode != 0:
    if "slurm" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","):
        raise RuntimeError("slurm is required (TORCHX_REQUIRE_ENGINES) but no cluster answers: "
                           "run scripts/engines/slurm-up.sh")
    pytest.skip("no Slurm cluster (scripts/engines/slurm-up.sh starts one)", allow_module_level=True)


@pytest.fixture
def ui(tmp_path):
    server = UiServer(tmp_path, "-s", "slurm")
    yield server
    assert server.stop() == 0, server.stderr()


def test_slurm_apps_beside_local_ones(ui):
    local = ui.submit("utils.echo", "--msg", "from local")
    remote = ui.submit("utils.echo", "--msg", "from slurm", scheduler="slurm")
    assert remote.startswith("slurm://")
    done = ui.wait_state(remote, {"SUCCEEDED"}, timeout=180)
    assert done["scheduler"] == "slurm"
    assert done["status"]["roles"][0]["replicas"][0]["hostname"].startswith("node")
    ui.wait_state(local, {"SUCCEEDED"})

    status, page = ui.api("GET", "/api/v1/apps")
    assert status == 200 and page["schedulers"] == ["local_cwd", "pipeline", "sweep", "managed", "slurm"], page
    by_handle = {a["app_handle"]: a for a in page["apps"]}
    assert by_handle[remote]["scheduler"] == "slurm" and by_handle[remote]["state"] == "SUCCEEDED"
    assert by_handle[local]["scheduler"] == "local_cwd"
    status, only = ui.api("GET", "/api/v1/apps?scheduler=slurm")
    assert remote in [a["app_handle"] for a in only["apps"]] and local not in [a["app_handle"] for a in only["apps"]]

    _, _, log = ui.request("GET", app_path(remote, "/logs"))
    assert log == b"from slurm\n"


def test_cancel_a_running_slurm_job(ui):
    handle = ui.submit("utils.sh", "--", "sleep", "120", scheduler="slurm")
    ui.wait_state(handle, {"RUNNING"}, timeout=180)
    status, body = ui.api("POST", app_path(handle, "/cancel"))
    assert status == 202, body
    ui.wait_state(handle, {"CANCELLED"}, timeout=120)
