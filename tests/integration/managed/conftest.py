"""Shared by the managed-job suites: the CLI with a state directory of the test's own (managed jobs
cancelled at the end: a cancel stops the current attempt and every later one), and a tiny PyTorch
training script that checkpoints every step and resumes from its checkpoint."""

import json
import os
import pathlib
import sqlite3
import subprocess
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

# A real (tiny) model trained by DDP (gloo) when torchrun started it, else alone. Rank 0 writes
# the checkpoint atomically (a temporary file renamed over the old one) after every step, into the
# directory every attempt of a managed job shares; each attempt starts from it and says where.
TRAIN_PY = '''
import os, sys, time
import torch
import torch.distributed as dist

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
pause = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
ckpt_dir = os.environ["TORCHX_CHECKPOINT_DIR"]
ckpt = os.path.join(ckpt_dir, "model.pt")
distributed = "WORLD_SIZE" in os.environ
if distributed:
    dist.init_process_group("gloo")
rank = dist.get_rank() if distributed else 0
torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
if distributed:
    model = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
start = 0
if os.path.exists(ckpt):
    state = torch.load(ckpt)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    start = state["step"]
print(f"rank {rank} attempt {os.environ['TORCHX_RECOVERY_COUNT']} starts at step {start}", flush=True)
x = torch.randn(64, 4)
y = x.sum(dim=1, keepdim=True)
for step in range(start + 1, steps + 1):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    if rank == 0:
        tmp = ckpt + ".tmp"
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, tmp)
        os.replace(tmp, ckpt)
        print(f"checkpoint step {step} loss {loss.item():.4f}", flush=True)
    time.sleep(pause)
if distributed:
    dist.destroy_process_group()
print(f"rank {rank} done at step {steps}", flush=True)
'''


def have_torch() -> bool:
    return subprocess.run(["python3", "-c", "import torch"], capture_output=True).returncode == 0


needs_torch = pytest.mark.skipif(
    not have_torch() and "torch" not in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","),
    reason="torch is not installed")


class Cli:
    def __init__(self, tmp_path: pathlib.Path):
        self.binary = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "ci" / "cli" / "torchx")
        self.cwd = tmp_path
        self.state = tmp_path / "state"
        self.env = dict(os.environ, TORCHX_STATE_DIR=str(self.state))
        self.jobs = []

    def __call__(self, *args, check=True, timeout=300):
        res = subprocess.run([self.binary, *args], capture_output=True, text=True, cwd=self.cwd, env=self.env,
                             timeout=timeout)
        assert res.returncode in (0, 1, 2), f"torchx {args} crashed: {res.returncode}\n{res.stderr}"
        if check:
            assert res.returncode == 0, f"torchx {' '.join(args)} -> {res.returncode}\n{res.stdout}\n{res.stderr}"
        if res.stdout.startswith("managed://"):
            self.jobs.append(res.stdout.split()[0])
        return res

    def write(self, name: str, text: str) -> str:
        (self.cwd / name).write_text(text)
        return name

    def describe(self, handle: str) -> dict:
        return json.loads(self("describe", "--json", handle).stdout)

    def wait_for(self, handle: str, want, timeout: float = 300, what=None) -> dict:
        """The managed job's description once `what(d)` holds (default: its state is in `want`)."""
        deadline = time.monotonic() + timeout
        d = None
        while time.monotonic() < deadline:
            d = self.describe(handle)
            if (what(d) if what else d["state"] in want):
                return d
            time.sleep(0.5)
        raise AssertionError(f"{handle}: still {d and d['state']}, wanted {want or what}: {json.dumps(d, indent=1)}")


def supervisor_of(torchx, app_id: str) -> int:
    """The pid the store records for the app's supervisor (0 until it is recorded)."""
    db = sqlite3.connect(f"file:{torchx.state / 'local.db'}?mode=ro", uri=True, timeout=10)
    try:
        row = db.execute("SELECT supervisor_pid FROM apps WHERE app_id = ?", (app_id,)).fetchone()
        return row[0] if row else 0
    finally:
        db.close()


@pytest.fixture
def torchx(tmp_path):
    cli = Cli(tmp_path)
    yield cli
    for handle in cli.jobs:
        subprocess.run([cli.binary, "cancel", handle], capture_output=True, cwd=cli.cwd, env=cli.env, timeout=120)
