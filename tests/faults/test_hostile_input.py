"""One corpus of hostile arguments and environment values through every back-end (ctest label
`faults`): quotes, $() and backticks, globs, newlines and tabs, unicode, `--help`, empty and very
long values. Each must reach the replica byte-identical, and nothing in it may be executed.

- local_cwd and slurm (when a cluster answers): a Python replica writes what it received.
- local_docker on dockerd and podman (when they answer): a busybox replica prints it.
- ray (when a cluster answers): the same Python replica, on a Ray node of this host.
- kubernetes: the manifest a dry run builds carries every value verbatim. (Kubernetes itself
  expands `$(NAME)` for variables defined in the container, as it does for TorchX; the corpus
  names none.)

Engines that do not answer are skipped unless TORCHX_REQUIRE_ENGINES names them."""

import json
import os
import pathlib
import shutil
import socket
import subprocess

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")
REQUIRED = os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(",")
PWNED = pathlib.Path(f"/tmp/torchx-pwned-{os.getpid()}")

ARGS = [
    "it's", 'say "hi"', "'", '"', f"$(touch {PWNED})", f"`touch {PWNED}`", f"; touch {PWNED}", f"| touch {PWNED}",
    "*", "?", "[a-z]", "~", "a b\tc", "new\nline", "trailing\n", "\r\n", "$HOME", "${HOME}", "\\backslash\\",
    "--help", "-h", "-", "--", "--x=1,2", "a;b|c&d>e<f", "ünïcødé ✓ 日本語", "emoji 🚀", " ", "", "x" * 65536,
]
ENV = {f"HOSTILE_{i}": v for i, v in enumerate(ARGS[:-1] + ["y" * 8192])}

DUMP = ("import json, os, sys; json.dump({'argv': sys.argv[1:], 'env': {k: os.environ.get(k) for k in %r}}, "
        "open('received.json', 'w'))") % sorted(ENV)


def cli(*args, cwd, env=None, check=True, timeout=300):
    res = subprocess.run([BINARY, *args], capture_output=True, text=True, cwd=cwd, env=env or os.environ,
                         timeout=timeout)
    if check:
        assert res.returncode == 0, f"torchx {' '.join(args[:6])} -> {res.returncode}\n{res.stdout}\n{res.stderr}"
    return res


def spec(tmp_path, name, role) -> str:
    role = {"name": name, "resource": {"cpu": 1, "gpu": 0, "memMB": 256}, **role}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"name": name, "roles": [role]}))
    return f"./{path.name}"


def assert_received(tmp_path):
    got = json.loads((tmp_path / "received.json").read_text())
    assert got["argv"] == ARGS
    assert got["env"] == ENV
    assert not PWNED.exists()


def test_local_cwd(tmp_path):
    env = dict(os.environ, TORCHX_STATE_DIR=str(tmp_path / "state"))
    role = {"image": str(tmp_path), "entrypoint": "python3", "args": ["-c", DUMP, *ARGS], "env": ENV}
    cli("run", "--wait", spec(tmp_path, "hostile", role), cwd=tmp_path, env=env)
    assert_received(tmp_path)


def slurm_up() -> bool:
    up = shutil.which("sbatch") is not None and subprocess.run(["sinfo"], capture_output=True).returncode == 0
    if not up and "slurm" in REQUIRED:
        raise RuntimeError("slurm is required (TORCHX_REQUIRE_ENGINES) but no cluster answers")
    return up


@pytest.mark.skipif(not slurm_up(), reason="no Slurm cluster (scripts/engines/slurm-up.sh)")
def test_slurm(tmp_path):
    role = {"image": str(tmp_path), "entrypoint": "python3", "args": ["-c", DUMP, *ARGS], "env": ENV}
    res = cli("run", "--wait", "-s", "slurm", spec(tmp_path, "hostile", role), cwd=tmp_path, timeout=300)
    assert res.stdout.startswith("slurm://")
    assert_received(tmp_path)


ENGINES = {"docker": ("/var/run/docker.sock", "busybox:latest"),
           "podman": ("/run/podman/podman.sock", "localhost/busybox:latest")}


def engines():
    out = []
    for name, (sock, image) in ENGINES.items():
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(sock)
            out.append(pytest.param((sock, image), id=name))
        except OSError as e:
            if name in REQUIRED:
                raise RuntimeError(f"{name} is required (TORCHX_REQUIRE_ENGINES) but {sock} does not answer") from e
            out.append(pytest.param((sock, image), id=name, marks=pytest.mark.skip(reason=f"{name} is not running")))
    return out


@pytest.mark.parametrize("engine", engines())
def test_local_docker(tmp_path, engine):
    sock, image = engine
    env = dict(os.environ, DOCKER_HOST=f"unix://{sock}")
    names = sorted(ENV)
    # The script is fixed; every hostile byte arrives as an argument or a variable.
    script = "printf '<%s>' \"$@\"; " + "".join(f"printf '[%s]' \"${n}\"; " for n in names)
    role = {"image": image, "entrypoint": "sh", "args": ["-c", script, "sh", *ARGS], "env": ENV}
    handle = cli("run", "--wait", "-s", "local_docker", spec(tmp_path, "hostile", role), cwd=tmp_path,
                 env=env).stdout.split()[0]
    # Bytes, split on "\n" only: text mode would turn the corpus' "\r\n" into "\n".
    out = subprocess.run([BINARY, "log", handle, "--streams", "stdout"], capture_output=True, cwd=tmp_path, env=env,
                         timeout=120, check=True).stdout
    # `torchx log` prefixes each line with the replica and ends the last one.
    prefix = b"hostile/0 "
    lines = [line + b"\n" for line in out.split(b"\n")[:-1]]
    text = b"".join(line[len(prefix):] if line.startswith(prefix) else line for line in lines)
    want = ("".join(f"<{a}>" for a in ARGS) + "".join(f"[{ENV[n]}]" for n in names)).encode()
    assert text.rstrip(b"\n") == want.rstrip(b"\n")
    assert not PWNED.exists()
    cli("delete", handle, cwd=tmp_path, env=env, check=False)


# The project's test cluster (scripts/engines/ray-env.sh; test.sh exports where it is).
RAY_DASHBOARD = os.environ.get("TORCHX_RAY_DASHBOARD", "127.0.0.1:8275")


def ray_up() -> bool:
    import urllib.request
    try:
        with urllib.request.urlopen(f"http://{RAY_DASHBOARD}/api/version", timeout=3):
            return True
    except OSError as e:
        if "ray" in REQUIRED:
            raise RuntimeError(f"ray is required (TORCHX_REQUIRE_ENGINES) but no dashboard answers on {RAY_DASHBOARD}") from e
        return False


@pytest.mark.skipif(not ray_up(), reason="no Ray cluster (scripts/engines/ray-up.sh)")
def test_ray(tmp_path):
    # The replica runs in the job's unpacked working directory on its Ray node (this host): it
    # writes what it received where the test reads it.
    dump = DUMP.replace("'received.json'", repr(str(tmp_path / "received.json")))
    role = {"image": str(tmp_path), "entrypoint": "python3", "args": ["-c", dump, *ARGS], "env": ENV}
    res = cli("run", "--wait", "-s", "ray", spec(tmp_path, "hostile", role), cwd=tmp_path, timeout=300,
              env=dict(os.environ, RAY_ADDRESS=f"http://{RAY_DASHBOARD}"))
    assert res.stdout.startswith("ray://")
    assert_received(tmp_path)
    cli("delete", res.stdout.split()[0], cwd=tmp_path, check=False)


def test_kubernetes_manifest(tmp_path):
    role = {"image": "busybox", "entrypoint": "printf", "args": ["<%s>", *ARGS], "env": ENV}
    out = cli("run", "--dryrun", "-s", "kubernetes", "-cfg", "queue=default", spec(tmp_path, "hostile", role),
              cwd=tmp_path).stdout
    manifest = yaml.safe_load(out.split("=== SCHEDULER REQUEST ===", 1)[1])
    container = manifest["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    assert container["command"] == ["printf", "<%s>", *ARGS]
    env = {e["name"]: e["value"] for e in container["env"]}
    for k, v in ENV.items():
        assert env[k] == v
