"""`torchx debug stack` on a live 2x2 torchrun job on local_cwd (gloo on CPU): ranks 0-2 wait in an
all_reduce that rank 3 never joins, because it sleeps in `stuck_here`. The dump groups the four
workers' stacks (3 in all_reduce, 1 in stuck_here) beside the two torchrun agents, names each
rank, filters by role and replica, and says why for an ended app or an unknown role; `torchx
hosts` shows the app on this host. And
`torchx debug profile` of a busy replica for 2 s: a speedscope file whose frames name the busy
function.

Needs torch and py-spy. Skips without torch, unless TORCHX_REQUIRE_ENGINES names torch (CI)."""

import json
import os
import pathlib
import socket
import subprocess
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

if subprocess.run(["python3", "-c", "import torch.distributed"], capture_output=True).returncode != 0:
    if "torch" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","):
        raise RuntimeError("torch is required (TORCHX_REQUIRE_ENGINES) but cannot be imported")
    pytest.skip("torch is not installed", allow_module_level=True)

HANG = """\
import time
import torch
import torch.distributed as dist

dist.init_process_group("gloo")


def stuck_here():
    time.sleep(600)


if dist.get_rank() == 3:
    stuck_here()
dist.all_reduce(torch.ones(1))
"""


@pytest.fixture
def torchx(tmp_path):
    binary = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "ci" / "cli" / "torchx")
    env = dict(os.environ, TORCHX_STATE_DIR=str(tmp_path / "state"))

    def run(*args):
        return subprocess.run([binary, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)

    return run


def test_a_hung_rank_is_found_by_its_stack(torchx, tmp_path):
    (tmp_path / "train.py").write_text(HANG)  # the role is named after the script
    with socket.socket() as s:  # a rendezvous port of its own: other jobs may hold torchrun's default
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    res = torchx("run", "-s", "local_cwd", "dist.torchrun", "-j", "2x2", "--rdzv_port", str(port), "--script",
                 "train.py")
    assert res.returncode == 0, res.stderr
    handle = res.stdout.split()[0]
    try:
        # Wait until every worker is where it stays: three in the collective, one asleep.
        deadline = time.monotonic() + 120
        groups = {}
        while time.monotonic() < deadline:
            res = torchx("debug", "stack", handle, "--json")
            assert res.returncode == 0, res.stderr
            dump = json.loads(res.stdout)
            groups = {g["innermost"]["function"]: g for g in dump["groups"] if g["innermost"]}
            if groups.get("all_reduce", {}).get("count") == 3 and groups.get("stuck_here", {}).get("count") == 1:
                break
            time.sleep(1)
        assert groups.get("all_reduce", {}).get("count") == 3, dump
        ranks = sorted(dump["processes"][i]["rank"] for i in groups["all_reduce"]["members"])
        assert ranks == [0, 1, 2], dump
        stuck = dump["processes"][groups["stuck_here"]["members"][0]]
        assert stuck["rank"] == 3 and stuck["role"] == "train" and stuck["replica_id"] == 1, stuck
        assert [f["function"] for f in groups["stuck_here"]["frames"]] == ["stuck_here", "<module>"]
        # The two torchrun agents are there too, each its replica's.
        agents = [g for g in dump["groups"] if g["count"] == 2]
        assert agents and sorted(dump["processes"][i]["replica_id"] for i in agents[0]["members"]) == [0, 1], dump

        # As people read it: the largest group first, each headed by where it is.
        res = torchx("debug", "stack", handle)
        assert res.returncode == 0, res.stderr
        assert res.stdout.startswith("3 processes in all_reduce ("), res.stdout
        assert "1 process in stuck_here (train.py:" in res.stdout and "rank 3 on localhost" in res.stdout, res.stdout

        # One replica: its agent and its two ranks.
        res = torchx("debug", "stack", handle, "--role", "train", "--replica", "1", "--json")
        one = json.loads(res.stdout)
        assert sorted(p["rank"] for p in one["processes"] if p["rank"] is not None) == [2, 3], one
        assert {p["replica_id"] for p in one["processes"]} == {1}

        # `torchx hosts`: this host, and the app with both its replicas on it.
        res = torchx("hosts", "-s", "local_cwd", "--json")
        assert res.returncode == 0, res.stderr
        [view] = json.loads(res.stdout)
        [host] = view["hosts"]
        assert host["state"] == "up" and host["cpus"] >= 1 and host["memory_mb"] > 0, host
        [app] = [a for a in host["apps"] if a["handle"] == handle]
        assert app["where"] == ["train/0", "train/1"], host
        res = torchx("hosts", "-s", "local_cwd")
        assert res.returncode == 0 and res.stdout.splitlines()[1].startswith("HOST "), res.stdout
        assert f"    {handle} (train/0, train/1)" in res.stdout, res.stdout

        res = torchx("debug", "stack", handle, "--role", "nope")
        assert res.returncode == 2 and "roles: [train]" in res.stderr, res.stderr
        # A profile is of one replica: with two, it asks which.
        res = torchx("debug", "profile", handle, "--duration", "1")
        assert res.returncode == 2 and "train/0, train/1" in res.stderr, res.stderr
    finally:
        torchx("cancel", handle)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        res = torchx("debug", "stack", handle)
        if res.returncode != 0:
            break
        time.sleep(0.5)
    assert res.returncode == 1 and "has ended (CANCELLED)" in res.stderr, res.stderr


BUSY = """\
import time


def busy_loop():
    x = 0
    t = time.time()
    while time.time() - t < 600:
        x += 1


busy_loop()
"""


def test_a_busy_replicas_profile_names_its_busy_function(torchx, tmp_path):
    (tmp_path / "busy.py").write_text(BUSY)
    res = torchx("run", "-s", "local_cwd", "utils.python", "--script", "busy.py")
    assert res.returncode == 0, res.stderr
    handle = res.stdout.split()[0]
    try:
        time.sleep(2)  # past the interpreter's start
        res = torchx("debug", "profile", handle, "--duration", "2", "-o", str(tmp_path / "busy.speedscope.json"))
        assert res.returncode == 0, res.stderr
        assert res.stdout.strip() == str(tmp_path / "busy.speedscope.json")
        profile = json.loads((tmp_path / "busy.speedscope.json").read_text())
        assert "speedscope" in profile["$schema"], profile.keys()
        names = {f["name"] for f in profile["shared"]["frames"]}
        assert "busy_loop" in names, names
    finally:
        torchx("cancel", handle)
