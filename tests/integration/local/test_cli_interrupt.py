"""The CLI as a person drives it on local_cwd: Ctrl-C (SIGINT, twice) or SIGTERM sent to a real
`torchx run --log/--wait`, `run --managed --wait` and `sweep run --wait` process cancels what it
waits on, leaves no replica process behind and exits 130 or 143; and `.torchxconfig`'s
`[cli:run] component` takes the arguments after `--`, as TorchX's does."""

import json
import os
import pathlib
import signal
import subprocess
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
BIN = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "ci" / "cli" / "torchx")
ENDED = ("SUCCEEDED", "FAILED", "CANCELLED")


@pytest.fixture
def cli(tmp_path):
    env = dict(os.environ, TORCHX_STATE_DIR=str(tmp_path / "state"))
    started = []

    def run(*args, **kw):
        return subprocess.run([BIN, *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120, **kw)

    def start(*args):
        p = subprocess.Popen([BIN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                             env=env)
        started.append(p)
        return p

    run.start, run.cwd = start, tmp_path
    yield run
    for p in started:  # a test that failed early: its CLI and anything it left running
        if p.poll() is None:
            p.kill()
            p.wait()
    listed = run("list", "-s", "local_cwd", "--json")
    for app in json.loads(listed.stdout or "[]") if listed.returncode == 0 else []:
        if app.get("state") not in ENDED:
            run("cancel", app["app_handle"])


def replica_script(pids: pathlib.Path) -> str:
    """A replica whose child runs long enough to be interrupted, its pid recorded (`$!`: `$$` is an
    escaped `$` in an AppDef's arguments)."""
    return f"sleep 60 & echo $! >> {pids}; wait"


def wait_for_pids(pids: pathlib.Path, timeout=60):
    deadline = time.monotonic() + timeout
    while not (pids.exists() and pids.read_text().split()):
        assert time.monotonic() < deadline, "the replica never started"
        time.sleep(0.05)
    return [int(p) for p in pids.read_text().split()]


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie does not: it only waits for its parent to read its end)."""
    try:
        status = pathlib.Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def state_of(cli, handle) -> str:
    out = cli("status", handle)
    return next((line.split(":", 1)[1].strip() for line in out.stdout.splitlines() if "State:" in line), "")


def pipeline_file(cwd: pathlib.Path, pids: pathlib.Path) -> str:
    step = {"component": "utils.sh", "args": ["sh", "-c", replica_script(pids)]}
    (cwd / "flow.json").write_text(json.dumps({
        "name": "flow", "scheduler": "local_cwd", "steps": {"first": step, "second": {**step, "depends_on": "first"}}}))
    return "flow.json"


SINGLE = ["utils.sh", "sh", "-c"]
# (case, the verb's arguments before the replica's script or file, the signals sent, the exit code)
CASES = [
    ("run --log, Ctrl-C twice", ["run", "-s", "local_cwd", "--log", *SINGLE], [signal.SIGINT, signal.SIGINT], 130),
    ("run --wait, Ctrl-C twice", ["run", "-s", "local_cwd", "--wait", *SINGLE], [signal.SIGINT, signal.SIGINT], 130),
    ("run --wait, SIGTERM", ["run", "-s", "local_cwd", "--wait", *SINGLE], [signal.SIGTERM], 143),
    ("run --managed --wait", ["run", "--managed", "-s", "local_cwd", "--wait", *SINGLE], [signal.SIGINT], 130),
    ("sweep run --wait", ["sweep", "run", "-s", "local_cwd", "--max_parallel", "1", "--wait", "-p", "x=1,2,3",
                          *SINGLE], [signal.SIGINT], 130),
    ("pipeline run --wait", ["pipeline", "run", "--wait"], [signal.SIGINT], 130),
]


@pytest.mark.parametrize("case,argv,signals,code", CASES, ids=[c[0] for c in CASES])
def test_an_interrupt_cancels_what_the_cli_waits_on(cli, case, argv, signals, code):
    pids = cli.cwd / "pids"
    if argv[0] == "pipeline":
        argv = [*argv, pipeline_file(cli.cwd, pids)]
    elif argv[0] == "sweep":
        argv = [*argv, replica_script(pids) + " # @{x}"]
    else:
        argv = [*argv, replica_script(pids)]
    proc = cli.start(*argv)
    (pid,) = wait_for_pids(pids)
    for i, sig in enumerate(signals):
        if i:
            time.sleep(0.1)  # a second Ctrl-C while the first cancels
        proc.send_signal(sig)
    out, err = proc.communicate(timeout=90)
    handle = out.split()[0]
    # Ended by the signal it got, as a process that was interrupted should be (a shell's $? reads
    # 128 + the signal: `code`), so a script running it stops too.
    assert proc.returncode == -signals[0] and 128 + signals[0] == code, err
    name = "SIGINT" if signals[0] == signal.SIGINT else "SIGTERM"
    assert f"{name}: cancelling {handle}" in err and "torchx log -t" in err  # and how to leave it running
    assert f"{handle} CANCELLED" in err
    assert state_of(cli, handle) == "CANCELLED"
    assert not alive(pid)  # the replica's own child: the whole process group was stopped
    time.sleep(1.5)  # nothing new starts after the cancel: no attempt, trial or step
    assert len(pids.read_text().split()) == 1


def test_arguments_after_double_dash_go_to_the_configured_component(cli):
    (cli.cwd / ".torchxconfig").write_text("[cli:run]\ncomponent = utils.echo\n")

    def app(*args):
        res = cli("run", "--dryrun", "--json", *args)
        assert res.returncode == 0, res.stderr
        app = json.loads(res.stdout)["app"]
        for role in app["roles"]:
            role["env"].pop("TORCHX_INTERNAL_SESSION_ID")  # one per launcher process
        return app

    assert app("--", "--msg", "hi") == app("utils.echo", "--msg", "hi")
    assert app("--", "--msg", "hi")["roles"][0]["args"] == ["hi"]
    assert app("--")["roles"][0]["args"] == ["hello world"]  # the component's defaults
    os.remove(cli.cwd / ".torchxconfig")
    res = cli("run", "--dryrun", "--", "--msg", "hi")
    assert res.returncode == 2
    assert "[cli:run]" in res.stderr
