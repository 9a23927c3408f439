"""local_cwd under faults, through the CLI as users run it (ctest label `faults`).

Each test injects one fault around a real app and asserts what a user would expect: the app ends
in a terminal state with the reason, no replica outlives its supervisor, logs written before the
fault are intact, the store's record of an app survives, and every error is clear (exit 1, a
message naming what failed), never a crash. The figures are in docs/reliability.md.

The disk-full and read-only cases mount a small tmpfs, so they need root (CI runs as root); they
skip elsewhere unless TORCHX_REQUIRE_ENGINES names faults."""

import json
import os
import pathlib
import signal
import sqlite3
import subprocess
import threading
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")
REQUIRED = "faults" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(",")


class Cli:
    def __init__(self, tmp_path: pathlib.Path, state_dir: pathlib.Path):
        self.cwd = tmp_path
        self.state_dir = state_dir
        self.env = dict(os.environ, TORCHX_STATE_DIR=str(state_dir))
        self.handles = []

    def __call__(self, *args, check=True, timeout=120):
        res = subprocess.run([BINARY, *args], capture_output=True, text=True, cwd=self.cwd, env=self.env,
                             timeout=timeout)
        assert res.returncode in (0, 1, 2), f"torchx {args} crashed: {res.returncode}\n{res.stderr}"
        if check:
            assert res.returncode == 0, f"torchx {' '.join(args)} -> {res.returncode}\n{res.stdout}\n{res.stderr}"
        if args and args[0] == "run" and res.stdout.startswith("local_cwd://"):
            self.handles.append(res.stdout.split()[0])
        return res

    def run(self, *args) -> str:
        return self("run", *args).stdout.split()[0]

    def status(self, handle: str) -> dict:
        return json.loads(self("status", "--json", handle).stdout)

    def wait(self, handle: str, pred, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        status = None
        while time.monotonic() < deadline:
            status = self.status(handle)
            if pred(status):
                return status
            time.sleep(0.2)
        raise AssertionError(f"{handle}: condition not met in {timeout}s: {status}")

    def supervisor_pid(self, handle: str) -> int:
        app_id = handle.rsplit("/", 1)[1]
        with sqlite3.connect(f"file:{self.state_dir / 'local.db'}?mode=ro", uri=True, timeout=30) as db:
            (pid,) = db.execute("SELECT supervisor_pid FROM apps WHERE app_id = ?", (app_id,)).fetchone()
        return pid


@pytest.fixture
def torchx(tmp_path):
    cli = Cli(tmp_path, tmp_path / "state")
    yield cli
    for h in cli.handles:
        cli("cancel", h, check=False)


def alive(marker: str) -> bool:
    return subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 0


def wait_gone(marker: str, timeout: float = 10):
    deadline = time.monotonic() + timeout
    while alive(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(marker), f"a replica ({marker}) outlived its supervisor"


def running(status: dict) -> bool:
    return status["state"] == "RUNNING"


def terminal(status: dict) -> bool:
    return status["state"] in ("SUCCEEDED", "FAILED", "CANCELLED")


# ---- the supervisor killed (kill -9) at each phase ----

def test_supervisor_killed_while_replicas_run(torchx):
    marker = f"sleep {300 + os.getpid() % 997}.25"  # a command line no other process has
    h = torchx.run("utils.sh", "sh", "-c", f"echo started; {marker}")
    torchx.wait(h, running)
    deadline = time.monotonic() + 10
    while "started" not in torchx("log", h).stdout and time.monotonic() < deadline:
        time.sleep(0.1)
    os.kill(torchx.supervisor_pid(h), signal.SIGKILL)
    status = torchx.wait(h, terminal, timeout=20)
    assert status["state"] == "FAILED"
    assert "supervisor" in status["msg"] and "died" in status["msg"], status["msg"]
    wait_gone(marker)
    assert torchx("log", h).stdout == "sh/0 started\n"  # what was written is kept


def test_supervisor_killed_during_a_retry(torchx):
    marker = f"sleep {300 + os.getpid() % 997}.5"
    script = f'if [ ! -f first-done ]; then touch first-done; echo first; exit 3; fi; echo second; {marker}'
    app = {"name": "flaky", "roles": [{"name": "flaky", "image": str(torchx.cwd), "entrypoint": "sh",
                                       "args": ["-c", script], "max_retries": 2,
                                       "resource": {"cpu": 1, "gpu": 0, "memMB": 128}}]}
    (torchx.cwd / "flaky.json").write_text(json.dumps(app))
    h = torchx.run("./flaky.json")
    torchx.wait(h, lambda s: s["num_restarts"] == 1 and running(s))
    deadline = time.monotonic() + 10
    while not alive(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    os.kill(torchx.supervisor_pid(h), signal.SIGKILL)
    status = torchx.wait(h, terminal, timeout=20)
    assert status["state"] == "FAILED" and "supervisor" in status["msg"]
    assert status["num_restarts"] == 1
    wait_gone(marker)
    log = torchx("log", h).stdout
    assert "flaky/0 second" in log


def test_supervisor_killed_during_the_cancel_grace_period(torchx):
    marker = f"fault-grace-{os.getpid()}"
    # The replica ignores SIGTERM, so cancel waits out its grace period (60 s) before SIGKILL.
    script = f"trap 'echo got-term' TERM; echo ready; while true; do sleep 0.2; done # {marker}"
    h = torchx.run("-cfg", "kill_grace_seconds=60", "utils.sh", "sh", "-c", script)
    torchx.wait(h, running)
    deadline = time.monotonic() + 10
    while "ready" not in torchx("log", h).stdout and time.monotonic() < deadline:
        time.sleep(0.1)
    torchx("cancel", h)
    deadline = time.monotonic() + 10
    while "got-term" not in torchx("log", h).stdout and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive(marker)  # still in its grace period
    os.kill(torchx.supervisor_pid(h), signal.SIGKILL)
    status = torchx.wait(h, terminal, timeout=20)
    assert status["state"] in ("CANCELLED", "FAILED"), status
    wait_gone(marker)  # the watchdog killed the group, grace or not
    torchx("cancel", h)  # idempotent on an ended app


# ---- the state store ----

def test_a_damaged_store_is_a_clear_error_and_nothing_crashes(torchx):
    h = torchx.run("utils.echo", "--msg", "kept")
    torchx.wait(h, terminal)
    db = torchx.state_dir / "local.db"
    subprocess.run(["sqlite3", str(db), "PRAGMA wal_checkpoint(TRUNCATE)"], capture_output=True)
    saved = db.read_bytes()
    db.write_bytes(b"this is not a database" * 200)
    for args in (("status", h), ("list",), ("run", "utils.echo"), ("log", h), ("cancel", h)):
        res = torchx(*args, check=False)
        assert res.returncode == 1, (args, res)
        assert f"{db}: file is not a database" in res.stderr, (args, res.stderr)
    db.write_bytes(saved)
    assert torchx.status(h)["state"] == "SUCCEEDED"  # the record is back with the file


def test_a_store_locked_past_its_busy_timeout(torchx):
    h = torchx.run("utils.sh", "sh", "-c", "sleep 2; echo finished")  # ends while the store is locked
    torchx.wait(h, running)
    locked, release = threading.Event(), threading.Event()

    def hold():
        db = sqlite3.connect(str(torchx.state_dir / "local.db"), timeout=30)
        db.execute("BEGIN EXCLUSIVE")
        locked.set()
        release.wait(60)
        db.rollback()
        db.close()

    t = threading.Thread(target=hold)
    t.start()
    try:
        assert locked.wait(30)
        started = time.monotonic()
        res = torchx("run", "utils.echo", check=False, timeout=90)
        waited = time.monotonic() - started
        assert res.returncode == 1 and "database is locked" in res.stderr, res.stderr
        assert waited >= 25, waited  # it waited out the busy timeout (30 s) first
    finally:
        release.set()
        t.join()
    # The app that ended meanwhile kept retrying its last write: its outcome is not lost.
    status = torchx.wait(h, terminal, timeout=30)
    assert status["state"] == "SUCCEEDED", status
    assert torchx("log", h).stdout == "sh/0 finished\n"


# ---- a full disk and a read-only log directory (a small tmpfs: root only) ----

@pytest.fixture
def tmpfs(tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if res.returncode != 0:
        if REQUIRED:
            raise RuntimeError(f"faults are required (TORCHX_REQUIRE_ENGINES) but tmpfs cannot be mounted: {res.stderr}")
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def fill(path: pathlib.Path) -> pathlib.Path:
    filler = path / "filler"
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], capture_output=True)
    return filler


def test_a_full_disk_under_the_store(tmp_path, tmpfs):
    cli = Cli(tmp_path, tmpfs / "state")
    h = cli.run("utils.sh", "sh", "-c", "sleep 2; echo done")
    filler = fill(tmpfs)
    # A record bigger than the whole file system: no reuse of the WAL's free pages can take it.
    big = {"name": "big", "roles": [{"name": "big", "image": str(tmp_path), "entrypoint": "true",
                                     "env": {"BIG": "x" * (1536 * 1024)}}]}
    (tmp_path / "big.json").write_text(json.dumps(big))
    res = cli("run", "./big.json", check=False)
    assert res.returncode == 1 and "database or disk is full" in res.stderr, res.stderr
    time.sleep(3)  # the app ends while nothing can be written
    filler.unlink()
    status = cli.wait(h, terminal, timeout=30)
    assert status["state"] == "SUCCEEDED", status  # its end was recorded once there was room
    cli.run("utils.echo")  # and the store works again


def test_a_log_directory_that_cannot_be_written(tmp_path, tmpfs):
    cli = Cli(tmp_path, tmp_path / "state")
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    res = cli("run", "-cfg", f"log_dir={tmpfs}/logs", "utils.echo", check=False)
    assert res.returncode == 1, res
    assert f"cannot create the app's log directory {tmpfs}/logs" in res.stderr, res.stderr
    assert "Read-only file system" in res.stderr
    (tmp_path / "file").write_text("")
    res = cli("run", "-cfg", f"log_dir={tmp_path}/file/logs", "utils.echo", check=False)
    assert res.returncode == 1 and "Not a directory" in res.stderr, res.stderr
    assert "local_cwd://" not in cli("list").stdout  # nothing was recorded


# ---- many clients at once ----

def test_concurrent_runs_and_queries_lose_no_record(torchx):
    seconds = float(os.environ.get("TORCHX_FAULTS_SECONDS", "20"))
    handles, errors, calls = [], [], {"run": 0, "status": 0, "list": 0, "log": 0, "cancel": 0}
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def call(kind, *args):
        res = subprocess.run([BINARY, *args], capture_output=True, text=True, cwd=torchx.cwd, env=torchx.env,
                             timeout=120)
        with lock:
            calls[kind] += 1
            if res.returncode != 0:
                errors.append((args, res.returncode, res.stderr))
        return res

    def runner():
        while time.monotonic() < stop:
            res = call("run", "run", "utils.sh", "sh", "-c", "echo hi; sleep 0.5")
            if res.returncode == 0:
                with lock:
                    handles.append(res.stdout.split()[0])

    def querier(i):
        while time.monotonic() < stop:
            with lock:
                h = handles[-1 - (i % len(handles))] if handles else None
            call("list", "list")
            if h:
                call("status", "status", h)
                call("log", "log", h)
                if i % 4 == 0:
                    call("cancel", "cancel", h)

    threads = [threading.Thread(target=runner) for _ in range(32)] + \
              [threading.Thread(target=querier, args=(i,)) for i in range(8)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    total = sum(calls.values())
    print(f"\nconcurrency: {total} calls in {elapsed:.1f}s ({total / elapsed:.1f}/s): {calls}; "
          f"{len(handles)} apps; errors: {len(errors)}")
    assert not errors, errors[:5]
    torchx.handles.extend(handles)
    listed = torchx("list").stdout
    for h in handles:  # every app that was started is recorded, whole
        assert h in listed
    for h in handles[:: max(1, len(handles) // 20)]:
        status = torchx.wait(h, terminal, timeout=120)
        assert status["state"] in ("SUCCEEDED", "CANCELLED"), status
