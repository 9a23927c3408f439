"""local_docker when its container engine fails (ctest label `faults` + `docker`): the engine
restarted while a container runs (dockerd and podman), its socket missing, an image it does not
have. Each is a clear error while it lasts and a correct state afterwards. The engines are
restarted with the project's own scripts/engines/*-up.sh / *-down.sh (containers kept).

Engines that do not answer are skipped unless TORCHX_REQUIRE_ENGINES names them."""

import json
import os
import pathlib
import socket
import subprocess
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")
REQUIRED = os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(",")
ENGINES = {
    # name: (socket, image, down script, keep-containers variable, what a restart does to a container)
    "docker": ("/var/run/docker.sock", "busybox:latest", "dockerd", "DOCKER_DOWN_KEEP_CONTAINERS", "killed"),
    "podman": ("/run/podman/podman.sock", "localhost/busybox:latest", "podman", "PODMAN_DOWN_KEEP_CONTAINERS",
               "kept"),
}


def answers(sock: str) -> bool:
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(sock)
        return True
    except OSError:
        return False


def engines():
    out = []
    for name, spec in ENGINES.items():
        if answers(spec[0]):
            out.append(pytest.param((name, *spec), id=name))
        elif name in REQUIRED:
            raise RuntimeError(f"{name} is required (TORCHX_REQUIRE_ENGINES) but {spec[0]} does not answer")
        else:
            out.append(pytest.param((name, *spec), id=name, marks=pytest.mark.skip(reason=f"{name} is not running")))
    return out


def cli(*args, env, cwd, check=True):
    res = subprocess.run([BINARY, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)
    assert res.returncode in (0, 1, 2), f"torchx {args} crashed: {res.returncode}\n{res.stderr}"
    if check:
        assert res.returncode == 0, f"torchx {' '.join(args)} -> {res.returncode}\n{res.stdout}\n{res.stderr}"
    return res


def status(handle, env, cwd) -> dict:
    return json.loads(cli("status", "--json", handle, env=env, cwd=cwd).stdout)


def wait_for(pred, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError("timed out")


@pytest.mark.parametrize("engine", engines())
def test_the_engine_restarted_under_a_running_container(tmp_path, engine):
    name, sock, image, script, keep, fate = engine
    env = dict(os.environ, DOCKER_HOST=f"unix://{sock}")
    # Long enough, under dockerd, to outlast its shutdown (it SIGKILLs what its SIGTERM did not stop:
    # the shell is PID 1 and ignores it); short enough, under podman, to end soon after.
    sleep = 60 if fate == "killed" else 8
    handle = cli("run", "-s", "local_docker", "utils.sh", "--image", image, "sh", "-c",
                 f"echo up; sleep {sleep}; echo done", env=env, cwd=tmp_path).stdout.split()[0]
    wait_for(lambda: "up" in cli("log", handle, env=env, cwd=tmp_path).stdout)
    subprocess.run(["bash", str(REPO / "scripts" / "engines" / f"{script}-down.sh")], env=dict(os.environ, **{keep: "1"}),
                   capture_output=True, check=True)
    try:
        res = cli("status", handle, env=env, cwd=tmp_path, check=False)
        assert res.returncode == 1 and "cannot be reached" in res.stderr, res.stderr  # the outage, said plainly
    finally:
        subprocess.run(["bash", str(REPO / "scripts" / "engines" / f"{script}-up.sh")], capture_output=True, check=True)
    final = wait_for(lambda: (s := status(handle, env, tmp_path))["state"] in ("SUCCEEDED", "FAILED") and s, 60)
    if fate == "killed":  # dockerd stops its containers (no live-restore): the replica was killed
        assert final["state"] == "FAILED" and final["msg"] == "sh/0 exited with code 137", final
        assert cli("log", handle, env=env, cwd=tmp_path).stdout == "sh/0 up\n"
    else:  # podman has no daemon to lose: the container ran on
        assert final["state"] == "SUCCEEDED", final
        assert cli("log", handle, env=env, cwd=tmp_path).stdout == "sh/0 up\nsh/0 done\n"
    cli("delete", handle, env=env, cwd=tmp_path, check=False)


def test_a_missing_socket_and_a_missing_image_are_clear_errors(tmp_path):
    env = dict(os.environ, DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock")
    res = cli("run", "-s", "local_docker", "utils.echo", "--image", "busybox:latest", env=env, cwd=tmp_path,
              check=False)
    assert res.returncode == 1, res
    assert f"container engine at unix://{tmp_path}/no-engine.sock cannot be reached" in res.stderr
    assert "set DOCKER_HOST" in res.stderr
    up = [spec for spec in ENGINES.values() if answers(spec[0])]
    if not up:
        pytest.skip("no container engine for the missing-image case")
    sock = up[0][0]
    env = dict(os.environ, DOCKER_HOST=f"unix://{sock}")
    res = cli("run", "-s", "local_docker", "utils.echo", "--image", "no-such-image:never", env=env, cwd=tmp_path,
              check=False)
    assert res.returncode == 1, res
    assert "image `no-such-image:never` is not on this engine" in res.stderr and "no registry is pulled" in res.stderr
