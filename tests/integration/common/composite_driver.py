"""The processes of a composite's driver, for tests that kill them as a person or the OOM killer
would: the watchdog (`torchx-composite-driver`, holding the composite's lock) and the driver it
runs as its child. Not the children the driver clones to start an app, which share its memory (and
so its command line) for the millisecond before they exec: a kill -9 takes one process."""

import os
import signal
import time


def driver_processes(composite_id: str) -> dict:
    """{pid: parent pid} of every process whose command line is this composite's driver."""
    found = {}
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if argv and argv[0].endswith(b"torchx-composite-driver") and composite_id.encode() in argv:
            found[int(pid)] = ppid
    return found


def watchdog_and_driver(composite_id: str) -> tuple:
    """(watchdog, driver) pids, either None while it is not there."""
    found = driver_processes(composite_id)
    roots = [p for p, pp in found.items() if pp not in found]
    watchdog = roots[0] if len(roots) == 1 else None
    driver = next((p for p, pp in found.items() if pp == watchdog), None) if watchdog else None
    return watchdog, driver


def wait_for_driver(composite_id: str, timeout: float = 10) -> tuple:
    deadline = time.monotonic() + timeout
    while True:
        watchdog, driver = watchdog_and_driver(composite_id)
        if watchdog and driver:
            return watchdog, driver
        assert time.monotonic() < deadline, f"no driver for {composite_id}: {driver_processes(composite_id)}"
        time.sleep(0.05)


def kill_driver_and_watchdog(composite_id: str) -> int:
    """Kills both (as a reboot would: nothing is left to revive the driver until a call reads the
    composite). Returns how many processes were killed."""
    watchdog, driver = watchdog_and_driver(composite_id)
    killed = 0
    for pid in (watchdog, driver):  # the watchdog first: it would replace the driver
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
    return killed
