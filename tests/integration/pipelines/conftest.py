"""Shared by the pipeline suites: the CLI with a state directory of the test's own, pipelines
cancelled at the end (cancel cascades to their steps), and the DDP step's script."""

import json
import os
import pathlib
import socket
import subprocess
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

# The middle step of the three-step pipelines: a real all-reduce across two ranks that reads what
# the first step wrote and writes what the last step reads.
TRAIN_PY = '''
import os, pathlib
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
data = pathlib.Path("data.txt").read_text().strip()
t = torch.ones(1)
dist.all_reduce(t)
if dist.get_rank() == 0:
    pathlib.Path("model.txt").write_text(f"model of {data} world={dist.get_world_size()} sum={int(t.item())}\\n")
print(f"trained rank={dist.get_rank()} on {data}", flush=True)
dist.barrier()
dist.destroy_process_group()
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cli:
    def __init__(self, tmp_path: pathlib.Path):
        self.binary = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")
        self.cwd = tmp_path
        self.env = dict(os.environ, TORCHX_STATE_DIR=str(tmp_path / "state"))
        self.pipelines = []

    def __call__(self, *args, check=True, timeout=300):
        res = subprocess.run([self.binary, *args], capture_output=True, text=True, cwd=self.cwd, env=self.env,
                             timeout=timeout)
        if check:
            assert res.returncode == 0, f"torchx {' '.join(args)} -> {res.returncode}\n{res.stdout}\n{res.stderr}"
        if args[:2] == ("pipeline", "run") and res.stdout.startswith("pipeline://"):
            self.pipelines.append(res.stdout.split()[0])
        return res

    def write(self, name: str, text: str) -> str:
        (self.cwd / name).write_text(text)
        return name

    def status(self, handle: str) -> dict:
        return json.loads(self("status", "--json", handle).stdout)

    def wait_state(self, handle: str, want, timeout: float = 180) -> dict:
        deadline = time.monotonic() + timeout
        status = None
        while time.monotonic() < deadline:
            status = self.status(handle)
            if status["state"] in want:
                return status
            time.sleep(0.5)
        raise AssertionError(f"{handle} still {status and status['state']}, wanted {want}: {status}")

    def roles(self, handle: str) -> dict:
        """Each step's (role's) replica states."""
        return {r["role"]: [rep["state"] for rep in r["replicas"]] for r in self.status(handle)["roles"]}


@pytest.fixture
def torchx(tmp_path):
    cli = Cli(tmp_path)
    yield cli
    for handle in cli.pipelines:
        cli("cancel", handle, check=False)
