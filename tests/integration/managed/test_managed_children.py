"""Managed children through the CLI on local_cwd: a pipeline step and a sweep's trials run as
managed jobs (a `managed:` block, `sweep run --managed`) are recovered when their attempt's
supervisor alone is killed -9 (as the OOM killer picks one process), resume from their own
checkpoint directory (`<dir>/<step>`, `<dir>/<trial index>`), see their own handle in
TORCHX_MANAGED_HANDLE, and show their attempts through the composite's handle; a sweep's trial
reports are read across its attempts; a bad block names its field and records nothing."""

import json
import os
import signal
import time

from conftest import supervisor_of

ENDED = ("SUCCEEDED", "FAILED", "CANCELLED")

# Counts to $1 in steps of 0.3 s, its progress kept in $TORCHX_CHECKPOINT_DIR/step; each start is
# a line in runs.<name> (attempt, handle, where it starts), the end one more.
COUNTER_SH = """
name=$1; last=$2; d=$TORCHX_CHECKPOINT_DIR; n=0
[ -f "$d/step" ] && n=$(cat "$d/step")
echo "start $TORCHX_RECOVERY_COUNT $TORCHX_MANAGED_HANDLE $n $d" >> runs.$name
echo "$name starts at $n"
while [ $n -lt $last ]; do n=$((n+1)); echo $n > "$d/step.tmp"; mv "$d/step.tmp" "$d/step"; sleep 0.3; done
echo "done $TORCHX_RECOVERY_COUNT $n" >> runs.$name
"""

# A trial that reports through TorchX's tracker every step (its attempt's number and the step)
# and resumes from its checkpoint.
TRIAL_PY = """
import os, sys, time
from torchx.tracker import app_run_from_env
index, last = sys.argv[1], int(sys.argv[2])
ckpt = os.path.join(os.environ["TORCHX_CHECKPOINT_DIR"], "step")
n = int(open(ckpt).read()) if os.path.exists(ckpt) else 0
attempt = int(os.environ["TORCHX_RECOVERY_COUNT"])
with open(f"runs.{index}", "a") as f:
    f.write(f"start {attempt} {os.environ['TORCHX_MANAGED_HANDLE']} {n} {os.environ['TORCHX_CHECKPOINT_DIR']}\\n")
run = app_run_from_env()
if attempt == 0:
    run.add_metadata(first_attempt=1)
while n < last:
    n += 1
    with open(ckpt + ".tmp", "w") as f:
        f.write(str(n))
    os.replace(ckpt + ".tmp", ckpt)
    run.add_metadata(step=n, attempt=attempt)
    time.sleep(0.3)
"""


def composite(torchx, handle: str) -> dict:
    """The composite as `torchx list --json` lists it (its members with their handles)."""
    for app in json.loads(torchx("list", "--json").stdout):
        if app["app_handle"] == handle:
            return app
    raise AssertionError(f"{handle} is not listed")


def wait_state(torchx, handle: str, want, timeout: float = 180) -> str:
    deadline = time.monotonic() + timeout
    while True:
        state = json.loads(torchx("status", "--json", handle).stdout)["state"]
        if state in want or time.monotonic() > deadline:
            return state
        time.sleep(0.5)


def kill_first_attempts_supervisor(torchx, managed_handle: str, progress) -> str:
    """Kills the supervisor (alone) of the managed job's first attempt once `progress()` holds;
    returns the attempt's handle."""
    deadline = time.monotonic() + 120
    while True:
        assert time.monotonic() < deadline, torchx.describe(managed_handle)
        attempts = torchx.describe(managed_handle)["attempts"]
        attempt = attempts[0].get("handle") if attempts else None
        pid = supervisor_of(torchx, attempt.rsplit("/", 1)[1]) if attempt else 0
        if pid and progress():
            os.kill(pid, signal.SIGKILL)
            return attempt
        time.sleep(0.2)


def reached(checkpoint_dir, step: int):
    """Whether the checkpoint in `checkpoint_dir` has got to `step`."""
    def check():
        path = checkpoint_dir / "step"
        return path.exists() and int(path.read_text() or 0) >= step
    return check


def member_handle(torchx, handle: str, name: str) -> str:
    deadline = time.monotonic() + 60
    while True:
        members = {m["name"]: m for m in composite(torchx, handle)["members"]}
        if members.get(name, {}).get("app_handle"):
            return members[name]["app_handle"]
        assert time.monotonic() < deadline, members
        time.sleep(0.3)


def lines(torchx, name: str):
    path = torchx.cwd / name
    return path.read_text().split("\n")[:-1] if path.exists() else []


def test_a_managed_pipeline_step_is_recovered_from_its_own_checkpoint(torchx):
    torchx.write("counter.sh", COUNTER_SH)
    torchx.write("flow.yaml", """
name: flow
scheduler: local_cwd
steps:
  prep:
    component: utils.sh
    args: [sh, counter.sh, prep, "1"]
  train:
    component: utils.sh
    args: [sh, counter.sh, train, "12"]
    depends_on: [prep]
    managed:
      max_recoveries: 2
      checkpoint_dir: ckpt
  report:
    component: utils.sh
    args: [sh, counter.sh, report, "1"]
    depends_on: [train]
""")
    dry = torchx("pipeline", "run", "--dryrun", "flow.yaml").stdout
    assert "each step submitted when its dependencies succeed" in dry, dry
    assert "=== STEP train on local_cwd (managed), after prep ===" in dry, dry
    assert f"checkpoints in {torchx.cwd}/ckpt/train" in dry, dry
    handle = torchx("pipeline", "run", "flow.yaml").stdout.split()[0]
    torchx.jobs.append(handle)
    train = member_handle(torchx, handle, "train")
    assert train.startswith("managed://torchx/train-"), train

    first = kill_first_attempts_supervisor(torchx, train, reached(torchx.cwd / "ckpt" / "train", 3))
    assert wait_state(torchx, handle, ENDED) == "SUCCEEDED", torchx.describe(train)
    d = torchx.describe(train)
    assert [a["attempt"] for a in d["attempts"]] == [0, 1], d
    assert d["attempts"][0]["handle"] == first and d["attempts"][0]["cause"] == "supervisor_lost", d
    starts = [ln.split() for ln in lines(torchx, "runs.train") if ln.startswith("start")]
    assert [s[1] for s in starts] == ["0", "1"], starts
    assert all(s[2] == train and s[4] == str(torchx.cwd / "ckpt" / "train") for s in starts), starts
    assert starts[0][3] == "0" and int(starts[1][3]) >= 3, starts  # resumed, not restarted
    assert lines(torchx, "runs.train")[-1] == "done 1 12"
    assert len(lines(torchx, "runs.prep")) == 2 and len(lines(torchx, "runs.report")) == 2  # each ran once
    # The step's attempts through the pipeline's handle: its logs, its member, its file.
    log = torchx("log", f"{handle}/train").stdout
    assert "[attempt 0] train starts at 0" in log and "[attempt 1] train starts at" in log, log
    member = {m["name"]: m for m in composite(torchx, handle)["members"]}["train"]
    assert member["state"] == "SUCCEEDED" and member["scheduler"] == "local_cwd", member
    described = json.loads(torchx("describe", "--json", handle).stdout)
    assert described["steps"]["train"]["managed"]["max_recoveries"] == 2, described
    assert "managed" not in described["steps"]["prep"]


def test_managed_sweep_trials_are_recovered_and_report_across_attempts(torchx):
    torchx.write("trial.py", TRIAL_PY)
    torchx.write("sweep.yaml", """
name: msweep
component: utils.python
args: [--script, trial.py, --, "@{index}", "10"]
scheduler: local_cwd
max_parallel: 2
space:
  type: grid
  parameters:
    index: [0, 1]
managed:
  max_recoveries: 1
  checkpoint_dir: ckpts
""")
    dry = torchx("sweep", "run", "--dryrun", "sweep.yaml").stdout
    assert "2 managed trials" in dry and f"checkpoints in {torchx.cwd}/ckpts/0" in dry, dry
    handle = torchx("sweep", "run", "sweep.yaml").stdout.split()[0]
    torchx.jobs.append(handle)
    trial0 = member_handle(torchx, handle, "0")
    assert trial0.startswith("managed://torchx/"), trial0

    kill_first_attempts_supervisor(torchx, trial0, reached(torchx.cwd / "ckpts" / "0", 3))
    assert wait_state(torchx, handle, ENDED) == "SUCCEEDED", torchx.describe(trial0)
    assert len(torchx.describe(trial0)["attempts"]) == 2
    starts = [ln.split() for ln in lines(torchx, "runs.0")]
    assert [s[1] for s in starts] == ["0", "1"] and int(starts[1][3]) >= 3, starts
    assert all(s[2] == trial0 and s[4] == str(torchx.cwd / "ckpts" / "0") for s in starts), starts
    assert [ln.split()[1] for ln in lines(torchx, "runs.1")] == ["0"]  # trial 1 ran once, never recovered
    trials = {t["index"]: t for t in json.loads(torchx("sweep", "status", "--json", handle).stdout)["trials"]}
    # Reports from both attempts: the first attempt's own metric, the last attempt's last step.
    assert trials[0]["metrics"]["first_attempt"] == 1 and trials[0]["metrics"]["attempt"] == 1, trials[0]
    assert trials[0]["metrics"]["step"] == 10 and trials[1]["metrics"]["step"] == 10, trials
    assert json.loads(torchx("describe", "--json", handle).stdout)["managed"]["max_recoveries"] == 1


def test_sweep_run_managed_flags_and_bad_blocks(torchx):
    torchx.write("sweep.yaml", """
component: utils.sh
args: [echo, "@{x}"]
scheduler: local_cwd
space: {type: grid, parameters: {x: [1, 2]}}
""")
    dry = torchx("sweep", "run", "--dryrun", "--managed", "--max_recoveries", "4", "--failover", "local",
                 "sweep.yaml").stdout
    assert "2 managed trials" in dry and "up to 4 recoveries" in dry and "TARGET 1: local" in dry, dry
    plain = torchx("sweep", "run", "--dryrun", "sweep.yaml").stdout
    assert "managed trials" not in plain and "=== MANAGED" not in plain, plain
    for args, says in [
        (["--max_recoveries", "2"], "need --managed"),
        (["--managed", "--recover_on", "gremlins"], "unknown cause `gremlins`"),
        (["--managed", "--failover", "nosuch"], "nosuch"),
    ]:
        res = torchx("sweep", "run", *args, "sweep.yaml", check=False)
        assert res.returncode == 2 and says in res.stderr, (args, res.stderr)
    torchx.write("bad.yaml", """
steps:
  a:
    component: utils.echo
    managed: {max_recoverys: 2}
""")
    res = torchx("pipeline", "run", "bad.yaml", check=False)
    assert res.returncode == 2, res
    assert "steps.a.managed: unknown field `max_recoverys`" in res.stderr and "max_recoveries" in res.stderr
    assert not (torchx.state / "pipelines").exists() or not list((torchx.state / "pipelines").iterdir())
