"""slurm with a workspace, on the three-node cluster: workspace_type=dir copies the --workspace
directory into job_dir and the job runs there; workspace_type=docker builds the workspace into
each role's image with the local dockerd, tags it `<image_repo>:<image id>`, pushes it to a real
registry (Debian's docker-registry on a loopback port) before sbatch, and srun runs each replica
in it (`--container-image`). pyxis (the container plugin) cannot be installed here, so that job's
srun refuses the option: the test checks what was pushed and submitted, not a container run.

Needs Slurm (scripts/engines/slurm-up.sh); the docker cases need dockerd and docker-registry.
Skips without them unless TORCHX_REQUIRE_ENGINES names slurm (and docker)."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "common"))
from docker_registry import (DOCKER_SOCK, REGISTRY_BIN, Registry, dockerd_up, make_workspace,  # noqa: E402
                             remove_test_tags)

REPO = pathlib.Path(__file__).resolve().parents[3]
BINARY = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")
REQUIRED = os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(",")

if shutil.which("sbatch") is None or subprocess.run(["sinfo"], capture_output=True).returncode != 0:
    if "slurm" in REQUIRED:
        raise RuntimeError("slurm is required (TORCHX_REQUIRE_ENGINES) but no cluster answers: "
                           "run scripts/engines/slurm-up.sh")
    pytest.skip("no Slurm cluster (scripts/engines/slurm-up.sh starts one)", allow_module_level=True)

HAVE_DOCKER = dockerd_up() and os.access(REGISTRY_BIN, os.X_OK)
if not HAVE_DOCKER and "docker" in REQUIRED:
    raise RuntimeError("dockerd and docker-registry are required (TORCHX_REQUIRE_ENGINES names docker)")
needs_docker = pytest.mark.skipif(not HAVE_DOCKER, reason="no dockerd or docker-registry")


@pytest.fixture
def workspace(tmp_path):
    return make_workspace(tmp_path)


@pytest.fixture
def torchx(tmp_path):
    env = dict(os.environ, DOCKER_HOST=f"unix://{DOCKER_SOCK}", DOCKER_CONFIG=str(tmp_path / "docker"))
    jobs = []

    def run(*args, check=True):
        res = subprocess.run([BINARY, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
        if check:
            assert res.returncode == 0, f"torchx {' '.join(args)} -> {res.returncode}\n{res.stdout}\n{res.stderr}"
        if args and args[0] == "run" and res.stdout.startswith("slurm://"):
            jobs.append(res.stdout.split()[0])
        return res

    yield run
    for handle in jobs:
        subprocess.run([BINARY, "cancel", handle], capture_output=True, env=env, cwd=tmp_path)
    if HAVE_DOCKER:
        remove_test_tags()


@pytest.fixture
def registry(tmp_path):
    r = Registry(tmp_path)
    yield r
    r.stop()


def wait_ended(torchx, handle, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        state = json.loads(torchx("status", "--json", handle).stdout)["state"]
        if state in ("SUCCEEDED", "FAILED", "CANCELLED"):
            return state
        assert time.monotonic() < deadline, f"{handle} still {state}"
        time.sleep(0.5)


def test_dir_workspace_is_copied_into_job_dir_and_the_job_runs_there(torchx, workspace, tmp_path):
    job_dir = tmp_path / "job"
    res = torchx("run", "--wait", "--log", "-s", "slurm", "--workspace", str(workspace), "-cfg",
                 f"job_dir={job_dir}", "utils.sh", "cat", "hello.txt")
    assert "sh/0 workspace says hi" in res.stdout, res.stdout + res.stderr
    assert (job_dir / "hello.txt").read_text() == "workspace says hi\n"


@needs_docker
def test_docker_workspace_dry_run_builds_but_does_not_push(torchx, registry, workspace):
    repo = "torchx/slurm-dry"
    res = torchx("run", "--dryrun", "-s", "slurm", "--workspace", str(workspace), "-cfg",
                 f"workspace_type=docker,image_repo={registry.host}/{repo}", "utils.sh", "--image", "busybox:latest",
                 "cat", "hello.txt")
    notes = [ln for ln in res.stdout.splitlines() if ln.startswith("# workspace image pushed before sbatch: ")]
    assert len(notes) == 1, res.stdout
    image = notes[0].split(": ", 1)[1]
    assert image.startswith(f"{registry.host}/{repo}:") and len(image.rsplit(":", 1)[1]) == 64
    assert f"--container-image={image}" in res.stdout
    assert registry.tags(repo) == []


@needs_docker
def test_docker_workspace_is_pushed_before_sbatch_and_run_in_its_image(torchx, registry, workspace):
    repo = "torchx/slurm-ws"
    res = torchx("run", "-s", "slurm", "--workspace", str(workspace), "-cfg",
                 f"workspace_type=docker,image_repo={registry.host}/{repo}", "utils.sh", "--image", "busybox:latest",
                 "cat", "hello.txt")
    handle = res.stdout.split()[0]
    assert handle.startswith("slurm://"), res.stdout + res.stderr
    tags = registry.tags(repo)
    assert len(tags) == 1 and len(tags[0]) == 64, tags  # the image id's hash, as TorchX tags it
    script = json.loads(torchx("describe", "--native", "--json", handle).stdout)["batch_script"]
    assert f"--container-image={registry.host}/{repo}:{tags[0]}" in script
    # Without pyxis, srun refuses the option: the job fails there, after the push.
    assert wait_ended(torchx, handle) == "FAILED"


@needs_docker
def test_docker_workspace_without_image_repo_is_refused_before_building(torchx, workspace):
    res = torchx("run", "-s", "slurm", "--workspace", str(workspace), "-cfg", "workspace_type=docker", "utils.sh",
                 "--image", "busybox:latest", "true", check=False)
    assert res.returncode != 0
    assert "image_repo" in res.stderr and "slurm" in res.stderr, res.stderr
    assert not res.stdout.startswith("slurm://")
