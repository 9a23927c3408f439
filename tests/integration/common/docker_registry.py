"""A real image registry for workspace tests (Debian's docker-registry, the CNCF distribution
server, on a loopback port, storing in a temp dir), and cleanup of the image tags the tests push,
shared by the back-ends that push workspace images (kubernetes, slurm)."""

import json
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request

DOCKER_SOCK = "/var/run/docker.sock"
REGISTRY_BIN = shutil.which("docker-registry") or "/usr/bin/docker-registry"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dockerd_up():
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(DOCKER_SOCK)
        return True
    except OSError:
        return False


class Registry:
    """A docker-registry process serving from a temp dir on 127.0.0.1."""

    def __init__(self, root):
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        config = root / "registry.yml"
        config.write_text(f"version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {root}/data\n"
                          f"http:\n  addr: {self.host}\n")
        self.proc = subprocess.Popen([REGISTRY_BIN, "serve", str(config)], stdout=subprocess.DEVNULL,
                                     stderr=open(root / "registry.log", "w"))
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"http://{self.host}/v2/", timeout=2).read()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"docker-registry did not start: {(root / 'registry.log').read_text()}") from None
                time.sleep(0.1)

    def get(self, path, accept="application/json"):
        req = urllib.request.Request(f"http://{self.host}{path}", headers={"Accept": accept})
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.read()

    def tags(self, repo):
        try:
            return json.loads(self.get(f"/v2/{repo}/tags/list")).get("tags") or []
        except urllib.error.HTTPError as e:
            assert e.code == 404, e
            return []

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def engine_call(method, path):
    """One Docker Engine API call over the unix socket (for cleanup); the response body."""
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(DOCKER_SOCK)
        s.sendall(f"{method} {path} HTTP/1.0\r\nHost: d\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data.split(b"\r\n\r\n", 1)[-1]


def remove_test_tags():
    """Removes the tags these tests make: <loopback registry>/torchx/..."""
    for image in json.loads(engine_call("GET", "/images/json")):
        for tag in image.get("RepoTags") or []:
            if tag.startswith("127.0.0.1:") and "/torchx/" in tag:
                engine_call("DELETE", f"/images/{tag}?force=1")


def make_workspace(root):
    """A workspace to build: a file to ship, and one its .dockerignore keeps out."""
    ws = root / "ws"
    ws.mkdir()
    (ws / "hello.txt").write_text("workspace says hi\n")
    (ws / "secret.txt").write_text("never shipped\n")
    (ws / ".dockerignore").write_text("secret.txt\n")
    return ws
