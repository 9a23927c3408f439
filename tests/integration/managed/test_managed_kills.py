"""A managed job on local_cwd whose attempt's processes are killed the way they die in practice:
the supervisor alone (as Linux's OOM killer or a person's `kill -9` picks one process), the
supervisor and its watchdog together, and the watchdog alone (the job runs on; a later supervisor
death is still recovered). Why the attempt ended is read from the cause its watchdog or a reader
recorded, never from the sentence beside it.

Each case runs TORCHX_KILL_REPEATS times (default 3; 20 for a long run)."""

import os
import signal
import time

import pytest

from conftest import supervisor_of

REPEATS = int(os.environ.get("TORCHX_KILL_REPEATS", "3"))
ENDED = ("SUCCEEDED", "FAILED", "CANCELLED")


def runs_script(marker, first_sleep: float) -> str:
    """Appends the attempt's number to `marker`; the first attempt sleeps, later ones end at once."""
    return (f'echo $TORCHX_RECOVERY_COUNT >> {marker}; '
            f'[ "$TORCHX_RECOVERY_COUNT" -ge 1 ] && exit 0; sleep {first_sleep}')


def argv0(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return os.path.basename(f.read().split(b"\0")[0].decode())
    except OSError:
        return ""


def watchdog_of(supervisor: int) -> int:
    """The supervisor's watchdog: its child that is a fork of it (the replicas exec'd programs of their own)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for task in os.listdir(f"/proc/{supervisor}/task"):
            with open(f"/proc/{supervisor}/task/{task}/children") as f:
                for child in f.read().split():
                    if argv0(int(child)) == argv0(supervisor) == "torchx-supervisor":
                        return int(child)
        time.sleep(0.05)
    raise AssertionError(f"supervisor {supervisor} has no watchdog")


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def started_attempt(torchx, marker, first_sleep: float = 120):
    """Starts a managed job whose first attempt sleeps `first_sleep` s; returns its handle, attempt
    handle and pids once the first attempt runs (its marker written). A test that kills the
    supervisor keeps the default: the attempt must still run when it is killed, however slow a
    loaded machine is to get there (CI once took over 4 s)."""
    handle = torchx("run", "--managed", "-s", "local_cwd", "utils.sh", "sh", "-c",
                    runs_script(marker, first_sleep)).stdout.split()[0]
    d = torchx.wait_for(handle, None, timeout=60, what=lambda d: d["attempts"] and d["attempts"][0].get("handle"))
    attempt = d["attempts"][0]["handle"]
    app_id = attempt.rsplit("/", 1)[1]
    deadline = time.monotonic() + 60
    while not (marker.exists() and supervisor_of(torchx, app_id)):
        assert time.monotonic() < deadline, "the first attempt never started"
        time.sleep(0.05)
    supervisor = supervisor_of(torchx, app_id)
    return handle, attempt, supervisor, watchdog_of(supervisor)


def assert_recovered(torchx, handle, marker):
    d = torchx.wait_for(handle, ENDED, timeout=120)
    assert d["state"] == "SUCCEEDED", d
    assert [a["attempt"] for a in d["attempts"]] == [0, 1], d
    assert d["attempts"][0]["cause"] == "supervisor_lost", d
    assert d["attempts"][1]["why"] == "recovery 1 after supervisor_lost", d
    assert marker.read_text() == "0\n1\n"  # each attempt ran once


@pytest.mark.parametrize("rep", range(REPEATS))
def test_supervisor_alone_killed_is_recovered(torchx, rep):
    marker = torchx.cwd / "runs.txt"
    handle, _, supervisor, watchdog = started_attempt(torchx, marker)
    os.kill(supervisor, signal.SIGKILL)
    assert_recovered(torchx, handle, marker)
    assert not alive(watchdog)  # it recorded the end and left


@pytest.mark.parametrize("rep", range(REPEATS))
def test_supervisor_and_watchdog_killed_are_recovered(torchx, rep):
    marker = torchx.cwd / "runs.txt"
    handle, _, supervisor, watchdog = started_attempt(torchx, marker)
    os.kill(watchdog, signal.SIGKILL)
    os.kill(supervisor, signal.SIGKILL)
    assert_recovered(torchx, handle, marker)


@pytest.mark.parametrize("rep", range(REPEATS))
def test_watchdog_alone_killed_runs_on_in_one_attempt(torchx, rep):
    marker = torchx.cwd / "runs.txt"
    handle, attempt, supervisor, watchdog = started_attempt(torchx, marker, first_sleep=4)
    os.kill(watchdog, signal.SIGKILL)
    d = torchx.wait_for(handle, ENDED, timeout=120)
    assert d["state"] == "SUCCEEDED", d
    assert len(d["attempts"]) == 1, d
    assert marker.read_text() == "0\n"


@pytest.mark.parametrize("rep", range(REPEATS))
def test_a_supervisor_death_after_its_watchdogs_is_recovered(torchx, rep):
    marker = torchx.cwd / "runs.txt"
    handle, _, supervisor, watchdog = started_attempt(torchx, marker)
    os.kill(watchdog, signal.SIGKILL)
    time.sleep(0.3)
    assert alive(supervisor)
    os.kill(supervisor, signal.SIGKILL)
    assert_recovered(torchx, handle, marker)
