"""local_docker against real container engines over the Docker Engine API: dockerd and podman
(scripts/engines/dockerd-up.sh, podman-up.sh; busybox images imported from a local rootfs, no
registry). Each test runs on every engine that answers; TORCHX_REQUIRE_ENGINES naming docker or
podman makes a missing one an error."""

import json
import os
import pathlib
import socket
import subprocess
import time
import urllib.parse

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
ENGINES = {
    "docker": ("/var/run/docker.sock", "busybox:latest"),
    "podman": ("/run/podman/podman.sock", "localhost/busybox:latest"),
}
REQUIRED = os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(",")


def engine_up(sock):
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock)
        s.close()
        return True
    except OSError:
        return False


def engines():
    out = []
    for name, (sock, image) in ENGINES.items():
        if engine_up(sock):
            out.append(pytest.param((name, sock, image), id=name))
        elif name in REQUIRED:
            raise RuntimeError(f"{name} is required (TORCHX_REQUIRE_ENGINES) but {sock} does not answer")
    if not out:
        pytest.skip("no container engine (scripts/engines/dockerd-up.sh / podman-up.sh)", allow_module_level=True)
    return out


@pytest.fixture(params=engines())
def engine(request):
    return request.param


@pytest.fixture
def torchx(engine, tmp_path):
    name, sock, image = engine
    binary = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")
    env = dict(os.environ, DOCKER_HOST=f"unix://{sock}", TORCHX_STATE_DIR=str(tmp_path / "state"))
    handles = []

    def run(*args, check=True, timeout=120):
        res = subprocess.run([binary, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=timeout)
        if check:
            assert res.returncode == 0, f"torchx {' '.join(args)} -> {res.returncode}\n{res.stdout}\n{res.stderr}"
        if args and args[0] == "run" and res.stdout.startswith(("local_docker://", "managed://")):
            handles.append(res.stdout.split()[0])
        return res

    run.image = image
    yield run
    for h in handles:  # containers are removed with their apps
        subprocess.run([binary, "cancel", h], env=env, capture_output=True)
        subprocess.run([binary, "delete", h], env=env, capture_output=True)


def handle_of(res):
    return res.stdout.strip().splitlines()[0]


def wait_state(torchx, handle, want, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = json.loads(torchx("status", "--json", handle).stdout)["state"]
        if state in want:
            return state
        time.sleep(0.3)
    raise AssertionError(f"{handle} not in {want}")


def spec(tmp_path, name, role):
    app = {"name": name, "roles": [{"name": name, "resource": {"cpu": 1, "gpu": 0, "memMB": 128}, **role}]}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(app))
    return f"./{path.name}"


def test_echo_status_list_logs(torchx):
    res = torchx("run", "--wait", "--log", "-s", "local_docker", "utils.echo", "--image", torchx.image, "--msg", "hi there")
    handle = handle_of(res)
    assert "echo/0 hi there" in res.stdout
    assert json.loads(torchx("status", "--json", handle).stdout)["state"] == "SUCCEEDED"
    assert handle in torchx("list", "-s", "local_docker").stdout
    assert torchx("log", handle).stdout == "echo/0 hi there\n"


def test_replica_one_reaches_replica_zero_through_rank0_host(torchx, tmp_path):
    port = 20000 + os.getpid() % 20000
    # Replica 1 sends with `nc -e echo`, which writes whatever the peer does: with `echo | nc`, busybox nc
    # could read replica 0's end-of-stream (its stdin is empty) before its own stdin, and quit unsent.
    script = ("if [ \"$RID\" = 0 ]; then nc -l -p {p} -w 20; "
              "else for i in $(seq 1 50); do nc $TORCHX_RANK0_HOST {p} -e echo hello-from-1 && break; sleep 0.2; done; fi"
              ).format(p=port)
    role = {"image": torchx.image, "entrypoint": "sh", "args": ["-c", script], "num_replicas": 2,
            "env": {"RID": "${replica_id}"}}
    res = torchx("run", "--wait", "--log", "-s", "local_docker", spec(tmp_path, "pair", role))
    assert "pair/0 hello-from-1" in res.stdout, res.stdout + res.stderr


def test_failing_job_retries_then_fails(torchx, tmp_path):
    role = {"image": torchx.image, "entrypoint": "sh", "args": ["-c", "echo try; exit 3"], "max_retries": 2}
    handle = handle_of(torchx("run", "-s", "local_docker", spec(tmp_path, "flaky", role)))
    wait_state(torchx, handle, {"FAILED"})
    status = json.loads(torchx("status", "--json", handle).stdout)
    assert status["num_restarts"] == 2


def test_cancel(torchx):
    handle = handle_of(torchx("run", "-s", "local_docker", "utils.sh", "--image", torchx.image, "sleep", "300"))
    wait_state(torchx, handle, {"RUNNING"})
    # Each container's create body as the engine holds it (describe_native).
    native = json.loads(torchx("describe", "--native", "--json", handle).stdout)
    assert native["app_id"] == handle.rsplit("/", 1)[1] and len(native["containers"]) == 1
    config = native["containers"][0]["config"]
    config = json.loads(config) if isinstance(config, str) else config
    assert config["Image"] == torchx.image and "sleep 300" in config["Cmd"][-1] and "HostConfig" in config
    # The engine's host (GET /info), with the running container on it.
    [view] = json.loads(torchx("hosts", "-s", "local_docker", "--json").stdout)
    [host] = view["hosts"]
    assert host["cpus"] >= 1 and host["memory_mb"] > 0, host
    assert [a["where"] for a in host["apps"] if a["handle"] == handle] == [["sh/0"]], host
    torchx("cancel", handle)
    assert wait_state(torchx, handle, {"CANCELLED"}) == "CANCELLED"


def test_resources_are_read_from_the_engines_stats(torchx):
    # A busy shell loop holding a little memory: the engine's stats give it CPU and memory.
    script = "x=$(head -c 4000000 /dev/zero | tr '\\0' a); while :; do :; done"
    handle = handle_of(torchx("run", "-s", "local_docker", "utils.sh", "--image", torchx.image, "sh", "-c", script))
    wait_state(torchx, handle, {"RUNNING"})
    time.sleep(1)
    usage = json.loads(torchx("status", "--resources", "--json", handle).stdout)["resources"]
    (replica,) = usage["replicas"]
    (sample,) = replica["samples"]
    assert sample["cpu_percent"] > 20, usage
    assert sample["rss_bytes"] > 1 << 20, usage
    assert "no GPU figures" in usage["gpu_note"]
    assert "REPLICA" in torchx("top", "-n", "1", handle).stdout
    torchx("cancel", handle)


def test_hostile_arguments_arrive_byte_identical(torchx, tmp_path):
    hostile = ["it's", 'say "hi"', "$(touch /tmp/pwned)", "`id`", "*", "a b\tc", "new\nline", "-", "--x=1,2"]
    role = {"image": torchx.image, "entrypoint": "printf", "args": ["<%s>", *hostile]}
    res = torchx("run", "--wait", "-s", "local_docker", spec(tmp_path, "args", role))
    out = torchx("log", handle_of(res), "--streams", "stdout").stdout
    # `torchx log` prefixes every line with the replica and ends the last one.
    text = "".join(l[len("args/0 "):] if l.startswith("args/0 ") else l for l in out.splitlines(keepends=True))
    assert text.rstrip("\n") == "".join(f"<{a}>" for a in hostile)
    assert not os.path.exists("/tmp/pwned")


def test_follow_streams_lines_while_the_container_runs(torchx, tmp_path):
    role = {"image": torchx.image, "entrypoint": "sh",
            "args": ["-c", "for i in 1 2 3; do echo line$i; sleep 0.5; done; echo oops >&2"]}
    handle = handle_of(torchx("run", "-s", "local_docker", spec(tmp_path, "tail", role)))
    out = torchx("log", "-t", handle, "--streams", "stdout").stdout
    assert out == "tail/0 line1\ntail/0 line2\ntail/0 line3\n"


def test_workspace_builds_an_image_with_the_directory(torchx, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data.txt").write_text("from the workspace\n")
    (ws / "secret.log").write_text("never copied\n")
    (ws / ".dockerignore").write_text("*.log\n")
    res = torchx("run", "--wait", "--log", "-s", "local_docker", "--workspace", str(ws), "utils.sh", "--image",
                 torchx.image, "sh", "-c", "cat data.txt; test -e secret.log || echo ignored")
    assert "sh/0 from the workspace" in res.stdout and "sh/0 ignored" in res.stdout, res.stdout + res.stderr
    (ws / "Dockerfile.torchx").write_text("ARG IMAGE\nFROM $IMAGE\nCOPY data.txt /custom/data.txt\n")
    res = torchx("run", "--wait", "--log", "-s", "local_docker", "--workspace", str(ws), "utils.sh", "--image",
                 torchx.image, "cat", "/custom/data.txt")
    assert "sh/0 from the workspace" in res.stdout


def test_missing_image_fails_fast(torchx):
    t = time.monotonic()
    res = torchx("run", "-s", "local_docker", "utils.echo", "--image", "no-such-image:latest", check=False)
    assert res.returncode != 0 and "not on this engine" in res.stderr
    assert time.monotonic() - t < 20


def test_python_docker_workspace_mixin_builds_what_the_core_builds(engine, torchx, tmp_path):
    # TorchX's DockerWorkspaceMixin (Python plugins mix it in) on the real engine through docker-py:
    # the image holds the workspace minus .dockerignore, and the core's local_docker runs it.
    docker = pytest.importorskip("docker")
    from torchx.specs import Role
    from torchx.workspace.docker_workspace import DockerWorkspaceMixin

    _, sock, image = engine
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "data.txt").write_text("from the python mixin\n")
    (ws / "pkg" / "scratch.log").write_text("never copied\n")
    (ws / ".dockerignore").write_text("# build output\n**/*.log\n")
    client = docker.DockerClient(base_url=f"unix://{sock}")
    role = Role(name="sh", image=image)
    try:
        DockerWorkspaceMixin(docker_client=client).build_workspace_and_update_role(role, str(ws), {"quiet": True})
        assert role.image != image
        res = torchx("run", "--wait", "--log", "-s", "local_docker", "utils.sh", "--image", role.image,
                     "sh", "-c", "cat pkg/data.txt; test -e pkg/scratch.log || echo ignored")
        assert "sh/0 from the python mixin" in res.stdout and "sh/0 ignored" in res.stdout, res.stdout + res.stderr
    finally:
        if role.image != image:
            client.images.remove(role.image, force=True)
        client.close()


def engine_call(sock, method, path):
    """One Docker Engine API call over the engine's unix socket: (status, body)."""
    import http.client

    class Conn(http.client.HTTPConnection):
        def connect(self):
            self.sock = socket.socket(socket.AF_UNIX)
            self.sock.connect(sock)

    conn = Conn("localhost", timeout=30)
    conn.request(method, path)
    resp = conn.getresponse()
    return resp.status, resp.read()


def test_a_managed_job_killed_from_outside_ends_cancelled_and_an_exit_is_not_recovered(torchx, engine):
    """torchx run --managed on local_docker: `docker kill` of the attempt's container is a person's
    decision (CANCELLED, not submitted again); a script's exit 3 is its own (FAILED, user_error)."""
    _, sock, _ = engine

    def describe(handle):
        return json.loads(torchx("describe", "--json", handle).stdout)

    def wait(handle, what, timeout=60):
        deadline = time.monotonic() + timeout
        while not what(d := describe(handle)):
            assert time.monotonic() < deadline, d
            time.sleep(0.3)
        return d

    handle = handle_of(torchx("run", "--managed", "-s", "local_docker", "utils.sh", "--image", torchx.image,
                              "sleep", "60"))
    d = wait(handle, lambda d: d["state"] == "RUNNING")
    app_id = d["attempts"][0]["handle"].rsplit("/", 1)[1]
    label = json.dumps({"label": [f"torchx.pytorch.org/app-id={app_id}"]})
    status, body = engine_call(sock, "GET", "/containers/json?filters=" + urllib.parse.quote(label))
    assert status == 200, body
    (container,) = json.loads(body)
    status, body = engine_call(sock, "POST", f"/containers/{container['Id']}/kill")
    assert status == 204, body
    d = wait(handle, lambda d: d["state"] in ("CANCELLED", "FAILED", "SUCCEEDED"))
    assert d["state"] == "CANCELLED" and len(d["attempts"]) == 1, d
    assert d["attempts"][0]["cause"] == "cancelled" and "docker kill" in d["attempts"][0]["reason"], d

    handle = handle_of(torchx("run", "--managed", "-s", "local_docker", "utils.sh", "--image", torchx.image,
                              "sh", "-c", "exit 3"))
    d = wait(handle, lambda d: d["state"] in ("CANCELLED", "FAILED", "SUCCEEDED"))
    assert d["state"] == "FAILED" and len(d["attempts"]) == 1, d
    assert d["attempts"][0]["cause"] == "user_error" and "exited with code 3" in d["attempts"][0]["reason"], d
