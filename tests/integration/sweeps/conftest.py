"""Shared by the sweep suites: the CLI with a state directory of the test's own (sweeps cancelled
at the end: cancel cascades to their trials), and the tiny PyTorch training script the trials run."""

import json
import os
import pathlib
import subprocess
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

# A real (tiny) model: a linear regression fitted by SGD for a fixed number of steps. Its final
# loss depends on the learning rate (too small: it has not converged; right: near zero), so a
# sweep over `lr` has a best trial. It reports through TorchX's tracker API (the sweep's fsspec
# tracker) every 10 steps, and prints its final loss, which the test compares with the record.
TRAIN_PY = '''
import argparse, os
import torch
from torchx.tracker import app_run_from_env

p = argparse.ArgumentParser()
p.add_argument("--lr", type=float, required=True)
p.add_argument("--hidden", type=int, default=1)
p.add_argument("--steps", type=int, default=60)
a = p.parse_args()
torch.manual_seed(0)
x = torch.randn(256, 4)
y = x @ torch.tensor([[1.5], [-2.0], [0.5], [3.0]]) + 0.1
model = torch.nn.Sequential(torch.nn.Linear(4, a.hidden), torch.nn.Linear(a.hidden, 1))
opt = torch.optim.SGD(model.parameters(), lr=a.lr)
run = app_run_from_env()
for step in range(1, a.steps + 1):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    if step % 10 == 0:
        run.add_metadata(loss=float(loss.item()), step=step)
print(f"trial {os.environ['TORCHX_TRIAL_INDEX']} lr={a.lr} hidden={a.hidden} final loss {float(loss.item())!r}", flush=True)
'''


class Cli:
    def __init__(self, tmp_path: pathlib.Path):
        self.binary = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "ci" / "cli" / "torchx")
        self.cwd = tmp_path
        self.state = tmp_path / "state"
        self.env = dict(os.environ, TORCHX_STATE_DIR=str(self.state))
        self.sweeps = []

    def __call__(self, *args, check=True, timeout=300):
        res = subprocess.run([self.binary, *args], capture_output=True, text=True, cwd=self.cwd, env=self.env,
                             timeout=timeout)
        if check:
            assert res.returncode == 0, f"torchx {' '.join(args)} -> {res.returncode}\n{res.stdout}\n{res.stderr}"
        if args[:2] == ("sweep", "run") and res.stdout.startswith("sweep://"):
            self.sweeps.append(res.stdout.split()[0])
        return res

    def write(self, name: str, text: str) -> str:
        (self.cwd / name).write_text(text)
        return name

    def sweep(self, handle: str) -> dict:
        return json.loads(self("sweep", "status", "--json", handle).stdout)

    def wait_sweep(self, handle: str, want, timeout: float = 300) -> dict:
        deadline = time.monotonic() + timeout
        view = None
        while time.monotonic() < deadline:
            view = self.sweep(handle)
            if view["state"] in want:
                return view
            time.sleep(0.5)
        raise AssertionError(f"{handle} still {view and view['state']}, wanted {want}: {view}")


def max_overlap(trials) -> int:
    """The most trials running at once, from their recorded start (submitted) and end times."""
    events = []
    for t in trials:
        if t["submitted"] is not None:
            events.append((t["submitted"], 1))
            events.append((t["ended"] if t["ended"] is not None else float("inf"), -1))
    events.sort(key=lambda e: (e[0], e[1]))  # an end before a start at the same instant
    running = most = 0
    for _, d in events:
        running += d
        most = max(most, running)
    return most


@pytest.fixture
def torchx(tmp_path):
    cli = Cli(tmp_path)
    yield cli
    for h in cli.sweeps:
        cli("cancel", h, check=False)
