"""kubernetes with a workspace: the image is built by a real dockerd from the workspace, tagged
`<image_repo>:<image id>`, pushed to a real registry (Debian's docker-registry, the CNCF
distribution server, on a loopback port) and the Volcano Job sent to the API server fake names it.
A dry run builds but does not push; a push that fails creates no job.

Needs dockerd (scripts/engines/dockerd-up.sh) and docker-registry (scripts/install-deps.sh). Skips
without them, unless TORCHX_REQUIRE_ENGINES names docker (CI), where a missing one is an error."""

import base64
import gzip
import io
import json
import os
import pathlib
import subprocess
import sys
import tarfile

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "common"))
from docker_registry import (DOCKER_SOCK, REGISTRY_BIN, Registry, dockerd_up, free_port,  # noqa: E402
                             make_workspace, remove_test_tags)
from fake_apiserver import kubeconfig  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[3]
BINARY = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")
REQUIRED = "docker" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(",")


_missing = [what for what, ok in (("dockerd", dockerd_up()), ("docker-registry", os.access(REGISTRY_BIN, os.X_OK)))
            if not ok]
if _missing:
    if REQUIRED:
        raise RuntimeError(f"{', '.join(_missing)} required (TORCHX_REQUIRE_ENGINES names docker) but not available")
    pytest.skip(f"no {', '.join(_missing)}", allow_module_level=True)


@pytest.fixture
def registry(tmp_path):
    r = Registry(tmp_path)
    yield r
    r.stop()


@pytest.fixture
def torchx(server, pki, tmp_path):
    cfg = tmp_path / "kubeconfig"
    cfg.write_text(kubeconfig(server.url, pki, "cert"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHX_KUBERNETES")}
    env.update(KUBECONFIG=str(cfg), DOCKER_HOST=f"unix://{DOCKER_SOCK}", DOCKER_CONFIG=str(tmp_path / "docker"))
    def run(*args, check=True, extra_env=None):
        res = subprocess.run([BINARY, *args], capture_output=True, text=True, env={**env, **(extra_env or {})},
                             cwd=tmp_path, timeout=300)
        if check:
            assert res.returncode == 0, f"torchx {' '.join(args)} -> {res.returncode}\n{res.stdout}\n{res.stderr}"
        return res

    yield run
    remove_test_tags()


@pytest.fixture
def workspace(tmp_path):
    return make_workspace(tmp_path)


def created_jobs(server):
    return [json.loads(r[4]) for r in server.requests if r[0] == "POST" and r[1].endswith("/jobs")]


def files_in_layer(blob):
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(blob))) as tar:
        return {m.name: (tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()}


def test_workspace_image_is_built_pushed_and_named_in_the_job(torchx, server, registry, workspace):
    repo = "torchx/trainer"
    res = torchx("run", "-s", "kubernetes", "--workspace", str(workspace), "-cfg",
                 f"queue=default,image_repo={registry.host}/{repo}", "utils.sh", "--image", "busybox:latest",
                 "cat", "hello.txt")
    assert res.stdout.startswith("kubernetes://"), res.stdout
    [job] = created_jobs(server)
    image = job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["image"]
    prefix = f"{registry.host}/{repo}:"
    assert image.startswith(prefix), image
    tag = image[len(prefix):]
    assert len(tag) == 64 and all(c in "0123456789abcdef" for c in tag)  # TorchX's tag: the image id's hash

    # What the cluster would pull: the registry holds the tag, and its top layer is the workspace.
    assert registry.tags(repo) == [tag]
    manifest = json.loads(registry.get(f"/v2/{repo}/manifests/{tag}",
                                       "application/vnd.docker.distribution.manifest.v2+json"))
    top = manifest["layers"][-1]["digest"]
    files = files_in_layer(registry.get(f"/v2/{repo}/blobs/{top}", "*/*"))
    assert files.get("hello.txt") == b"workspace says hi\n", sorted(files)
    assert "secret.txt" not in files  # .dockerignore honoured


def test_no_docker_config_credential_reaches_the_state_directory_logs_or_job(torchx, server, registry, workspace,
                                                                             tmp_path):
    """Pushes authenticate with the docker config's `auths` (dockerd gets them as X-Registry-Auth);
    they are never written where the launcher keeps state or logs, printed, or sent in the job."""
    secret = "s3cret-docker-pw-4b1d"
    auth = base64.b64encode(f"ci:{secret}".encode()).decode()
    closed = f"127.0.0.1:{free_port()}"  # a push that fails: its error must not carry them either
    (tmp_path / "docker").mkdir(exist_ok=True)
    (tmp_path / "docker" / "config.json").write_text(json.dumps({"auths": {registry.host: {"auth": auth},
                                                                            closed: {"auth": auth}}}))
    state = tmp_path / "state"
    env = {"TORCHX_STATE_DIR": str(state)}
    ok = torchx("run", "-s", "kubernetes", "--workspace", str(workspace), "-cfg",
                f"queue=default,image_repo={registry.host}/torchx/authed", "utils.sh", "--image", "busybox:latest",
                "true", extra_env=env)
    failed = torchx("run", "-s", "kubernetes", "--workspace", str(workspace), "-cfg",
                    f"queue=default,image_repo={closed}/torchx/x", "utils.sh", "--image", "busybox:latest", "true",
                    check=False, extra_env=env)
    assert failed.returncode != 0 and "failed" in failed.stderr
    handle = ok.stdout.split()[0]
    torchx("status", handle, extra_env=env)
    torchx("list", "-s", "kubernetes", extra_env=env)
    needles = [secret.encode(), auth.encode()]
    seen = [("stdout/stderr", (ok.stdout + ok.stderr + failed.stdout + failed.stderr).encode())]
    seen += [(f"request {r[0]} {r[1]}", r[4].encode()) for r in server.requests]
    mine = {tmp_path / "docker", tmp_path / "data", tmp_path / "registry.yml", tmp_path / "registry.log"}
    for f in tmp_path.rglob("*"):
        if f.is_file() and not any(f == m or m in f.parents for m in mine):
            seen.append((str(f), f.read_bytes()))
    for name, data in seen:
        for needle in needles:
            assert needle not in data, f"{needle!r} in {name}"


def test_dry_run_builds_but_does_not_push(torchx, server, registry, workspace):
    repo = "torchx/dry"
    res = torchx("run", "--dryrun", "-s", "kubernetes", "--workspace", str(workspace), "-cfg",
                 f"queue=default,image_repo={registry.host}/{repo}", "utils.sh", "--image", "busybox:latest", "true")
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("# workspace image pushed before")]
    assert len(lines) == 1, res.stdout
    image = lines[0].split(": ", 1)[1]
    assert f"image: {image}" in res.stdout
    assert registry.tags(repo) == []
    assert created_jobs(server) == []


def test_a_failed_push_creates_no_job(torchx, server, workspace):
    closed = f"127.0.0.1:{free_port()}"  # nothing listens there
    res = torchx("run", "-s", "kubernetes", "--workspace", str(workspace), "-cfg",
                 f"queue=default,image_repo={closed}/torchx/x", "utils.sh", "--image", "busybox:latest", "true",
                 check=False)
    assert res.returncode != 0
    assert f"pushing image {closed}/torchx/x:" in res.stderr and f"to {closed} failed" in res.stderr, res.stderr
    assert created_jobs(server) == []


def test_nothing_is_pushed_for_a_job_that_cannot_be_sent(torchx, registry, workspace, tmp_path):
    res = torchx("run", "-s", "kubernetes", "--workspace", str(workspace), "-cfg",
                 f"queue=default,image_repo={registry.host}/torchx/unsent", "utils.sh", "--image", "busybox:latest",
                 "true", check=False, extra_env={"KUBECONFIG": str(tmp_path / "missing")})
    assert res.returncode != 0
    assert "kubeconfig" in res.stderr, res.stderr
    assert registry.tags("torchx/unsent") == []


def test_workspace_without_image_repo_is_refused_before_building(torchx, server, workspace):
    res = torchx("run", "-s", "kubernetes", "--workspace", str(workspace), "-cfg", "queue=default", "utils.sh",
                 "--image", "busybox:latest", "true", check=False)
    assert res.returncode != 0
    assert "image_repo" in res.stderr, res.stderr
    assert created_jobs(server) == []
