"""A real PyTorch DDP job through the launcher: `torchx run -s local_cwd dist.torchrun -j 2x2`, gloo on
CPU. Asserts 4 ranks with world size 4, a correct all-reduce, training, and SUCCEEDED, and that
status / log / list / describe work on it from fresh CLI processes; and that the example's teardown
leaves no gloo thread running into interpreter shutdown (where torch 2.13 can abort the process).

Needs torch (`pip install torch==2.13.0`). Skips without it, unless TORCHX_REQUIRE_ENGINES names
torch (CI does), where a missing engine must fail rather than skip."""

import json
import os
import pathlib
import re
import socket
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]


def _have_torch() -> bool:
    return subprocess.run(["python3", "-c", "import torch.distributed"], capture_output=True).returncode == 0


if not _have_torch():
    if "torch" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","):
        raise RuntimeError("torch is required (TORCHX_REQUIRE_ENGINES) but cannot be imported")
    pytest.skip("torch is not installed", allow_module_level=True)


@pytest.fixture
def torchx(tmp_path):
    binary = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")
    env = dict(os.environ, TORCHX_STATE_DIR=str(tmp_path / "state"))

    def run(*args, check=True):
        res = subprocess.run([binary, *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
        if check:
            assert res.returncode == 0, f"torchx {' '.join(args)} -> {res.returncode}\n{res.stdout}\n{res.stderr}"
        return res

    return run


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _replica_tails(torchx, handle: str, run_stderr: str) -> str:
    """The end of each replica's output, the replica that failed first leading: its last lines say
    why, while its peer's show only torchrun's reaction to being stopped. Lines torchrun prints
    about itself (warnings, the stopped agent's traceback) are left out so the ranks' own output
    fits in what a CI log keeps."""
    first = re.search(r"train/(\d+) exited with code", run_stderr)
    order = sorted((0, 1), key=lambda i: first is None or str(i) != first.group(1))
    parts = []
    for i in order:
        lines = torchx("log", f"{handle}/train/{i}", check=False).stdout.splitlines()
        own = [ln for ln in lines if "site-packages/torch/distributed/" not in ln
               and not ln.rstrip().endswith("*****")]
        parts.append(f"--- {handle}/train/{i}: last 60 of {len(lines)} lines, torchrun's own left out ---\n"
                     + "\n".join(own[-60:]))
    return "\n".join(parts)


def test_ddp_2x2_allreduce_and_training(torchx):
    res = torchx("run", "--wait", "-s", "local_cwd", "-cfg", "resource_interval=0.5", "dist.torchrun", "-j", "2x2",
                 "--rdzv_port", str(free_port()), "--script", "examples/ddp/train.py", check=False)
    handle = res.stdout.strip().splitlines()[0]
    if res.returncode != 0:  # show what the ranks printed: a failure here is otherwise opaque
        pytest.fail(f"DDP job failed:\n{res.stdout}\n{res.stderr}\n{_replica_tails(torchx, handle, res.stderr)}")
    assert handle.startswith("local_cwd://torchx/train-")

    status = json.loads(torchx("status", "--json", handle).stdout)
    assert status["state"] == "SUCCEEDED"
    assert [r["state"] for r in status["roles"][0]["replicas"]] == [4, 4]  # TorchX's JSON: replica states as ints

    log = torchx("log", handle).stdout
    ranks = re.findall(r"rank=(\d) world_size=(\d) local_rank=(\d) allreduce_sum=(\S+) expected=(\S+)", log)
    assert sorted(int(r[0]) for r in ranks) == [0, 1, 2, 3], log
    assert all(r[1] == "4" for r in ranks)
    assert all(r[3] == "10" and r[4] == "10" for r in ranks)
    # Each node ran two local ranks.
    assert sorted(r[2] for r in ranks) == ["0", "0", "1", "1"]
    trained = re.search(r"trained loss=(\S+) weight=\[(\S+), (\S+), (\S+)\]", log)
    assert trained and float(trained.group(1)) < 1e-3, log
    assert abs(float(trained.group(2)) - 2.0) < 0.05 and abs(float(trained.group(3)) + 3.0) < 0.05

    # What each node used: its torchrun and both workers (the tree), with CPU and memory, kept
    # after the job ended.
    usage = json.loads(torchx("top", "--json", handle).stdout)["resources"]  # every kept sample
    assert [(r["role"], r["replica_id"]) for r in usage["replicas"]] == [("train", 0), ("train", 1)]
    for replica in usage["replicas"]:
        assert replica["samples"], usage
        peak = max(replica["samples"], key=lambda s: s["rss_bytes"] or 0)
        assert peak["processes"] >= 3 and peak["rss_bytes"] > 100 << 20, replica
        assert max(s["cpu_percent"] or 0 for s in replica["samples"]) > 10, replica
    assert "train/1" in torchx("status", "--resources", handle).stdout  # the newest sample

    # logs of one replica, filtered
    only = torchx("log", "--regex", "allreduce", handle + "/train/1").stdout.strip().splitlines()
    assert len(only) == 2 and all(line.startswith("train/1 ") for line in only)
    listed = json.loads(torchx("list", "--json").stdout)
    assert [a["app_handle"] for a in listed] == [handle]
    described = json.loads(torchx("describe", "--json", handle).stdout)
    assert described["roles"][0]["entrypoint"] == "bash"
    assert "--nnodes 2 --nproc_per_node 2" in described["roles"][0]["args"][1]


def test_ddp_failure_is_reported(torchx, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch.distributed as d\nd.init_process_group('gloo')\nraise SystemExit(3)\n")
    res = torchx("run", "--wait", "dist.ddp", "-j", "1x2", "--script", str(bad), check=False)
    assert res.returncode == 1
    handle = res.stdout.strip().splitlines()[0]
    assert json.loads(torchx("status", "--json", handle).stdout)["state"] == "FAILED"
    # Why: the failed replica's last stderr lines, torchrun's report of the worker's exit among them.
    assert "bad/0 failed; the last" in res.stderr and "exitcode" in res.stderr, res.stderr


def test_ddp_example_teardown_leaves_no_thread_behind(torchx):
    # Deterministic guard for a rare abort: a gloo worker thread still alive at interpreter
    # shutdown aborts its rank now and then; here any such thread fails every run.
    res = torchx("run", "--wait", "-s", "local_cwd", "dist.ddp", "-j", "1x2", "--rdzv_port", str(free_port()),
                 "--script", "tests/integration/local/ddp_teardown_check.py", check=False)
    handle = res.stdout.strip().splitlines()[0]
    log = torchx("log", handle, check=False).stdout
    assert res.returncode == 0, f"{res.stdout}\n{res.stderr}\n{log[-4000:]}"
    assert sorted(re.findall(r"teardown ok: rank=(\d+)", log)) == ["0", "1"], log[-4000:]
