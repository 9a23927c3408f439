"""Sweeps on local_cwd through the CLI, as users run them: a 12-trial grid of a real PyTorch
training script with at most 3 trials at once and its best trial found from what the trials
reported; seeded random searches; early stop after failures; the detached driver killed mid-sweep
resuming without running a trial twice; cancel leaving nothing running; bad sweeps submitting and
recording nothing.

The PyTorch case needs torch (skipped without it unless TORCHX_REQUIRE_ENGINES names torch)."""

import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import TRAIN_PY, max_overlap

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "common"))
from composite_driver import kill_driver_and_watchdog, watchdog_and_driver  # noqa: E402

SUCCEEDED = "SUCCEEDED"


def have_torch() -> bool:
    return subprocess.run(["python3", "-c", "import torch"], capture_output=True).returncode == 0


needs_torch = pytest.mark.skipif(
    not have_torch() and "torch" not in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","),
    reason="torch is not installed")


@needs_torch
def test_grid_of_a_pytorch_model_three_at_a_time_best_from_reports(torchx):
    torchx.write("train.py", TRAIN_PY)
    torchx.write("sweep.yaml", """
name: lr-grid
component: utils.python
args: [--script, train.py, --, --lr, "@{lr}", --hidden, "@{hidden}"]
max_parallel: 3
objective: {metric: loss, direction: minimize}
space:
  type: grid
  parameters:
    lr: [0.0001, 0.001, 0.01, 0.05]
    hidden: [1, 4, 16]
""")
    res = torchx("sweep", "run", "--wait", "sweep.yaml", timeout=900)
    handle = res.stdout.split()[0]
    assert handle.startswith("sweep://torchx/lr-grid-")
    view = torchx.sweep(handle)
    assert view["state"] == SUCCEEDED, view
    trials = view["trials"]
    assert len(trials) == 12 and all(t["state"] == SUCCEEDED for t in trials), trials
    assert max_overlap(trials) == 3, [(t["index"], t["submitted"], t["ended"]) for t in trials]
    # Every trial's objective is the last loss it reported, the same its log prints.
    for t in trials:
        log = torchx("log", f"{handle}/{t['index']}").stdout
        printed = float(re.search(r"final loss (\S+)", log).group(1))
        assert t["objective"] == pytest.approx(printed, rel=1e-6), (t, log)
        assert t["metrics"]["step"] == 60
        assert f"lr={t['values']['lr']} hidden={t['values']['hidden']}" in log
    # Best first; the best is the lowest loss, and a learning rate that has converged beats 1e-4.
    objectives = [t["objective"] for t in trials]
    assert objectives == sorted(objectives)
    best = view["best"]
    assert best == trials[0]["index"] and trials[0]["values"]["lr"] >= 0.01
    best_view = json.loads(torchx("sweep", "best", "--json", handle).stdout)
    assert [t["index"] for t in best_view["trials"]] == [best]
    table = torchx("sweep", "status", handle).stdout
    assert f"{best} (best)" in table and "loss*" in table and "hidden" in table
    # Listed as one, its trials nested; described as the file that runs it.
    listed = torchx("list").stdout
    assert handle in listed and listed.count("|-") + listed.count("`-") >= 12
    described = torchx("describe", handle).stdout
    assert "component: utils.python" in described and "max_parallel: 3" in described


def test_random_search_is_the_seeds(torchx):
    def plan(seed: int) -> str:
        out = torchx("sweep", "run", "--dryrun", "--trials", "8", "--seed", str(seed), "-p", "lr=loguniform(1e-4,1e-1)",
                     "-p", "opt=choice(sgd,adam)", "-p", "layers=randint(1,4)", "utils.sh", "echo", "@{lr}", "@{opt}",
                     "@{layers}").stdout
        return "\n".join(line for line in out.splitlines() if line.startswith("trial "))

    first, again, other = plan(3), plan(3), plan(4)
    assert first.count("\n") == 7
    assert first == again
    assert first != other
    # The Python API draws the same trials from the same core.
    code = ("from torchx import sweeps; print(sweeps.dryrun({'component': 'utils.sh', "
            "'args': ['echo', '@{lr}', '@{opt}', '@{layers}'], 'space': {'type': 'random', 'seed': 3, 'trials': 8, "
            "'parameters': {'lr': {'distribution': 'loguniform', 'low': 1e-4, 'high': 1e-1}, "
            "'opt': {'distribution': 'choice', 'values': ['sgd', 'adam']}, "
            "'layers': {'distribution': 'randint', 'low': 1, 'high': 4}}}}))")
    py = subprocess.run(["python3", "-c", code], capture_output=True, text=True, cwd=torchx.cwd, env=torchx.env)
    assert py.returncode == 0, py.stderr
    assert "\n".join(line for line in py.stdout.splitlines() if line.startswith("trial ")) == first


def test_max_failures_stops_the_sweep(torchx):
    res = torchx("sweep", "run", "--wait", "--max_parallel", "1", "--max_failures", "2", "-p", "code=0,1,1,0,0",
                 "utils.sh", "sh", "-c", "echo noise; echo 'step @{code}' >&2; echo 'bad code @{code}' >&2; exit @{code}",
                 check=False, timeout=300)
    assert res.returncode == 1, res.stderr
    handle = res.stdout.split()[0]
    view = torchx.sweep(handle)
    states = {t["index"]: t["state"] for t in view["trials"]}
    assert states == {0: SUCCEEDED, 1: "FAILED", 2: "FAILED", 3: "CANCELLED", 4: "CANCELLED"}, view
    assert "stopped early (max_failures 2)" in view["msg"]
    assert all(t["handle"] == "" for t in view["trials"] if t["index"] >= 3)
    # Why each failed: its stderr's last lines in --json, the last one in the table's REASON column;
    # the trials that never ran say why not.
    tails = {t["index"]: t["stderr_tail"] for t in view["trials"]}
    assert tails[1] == ["step 1", "bad code 1"] and tails[0] == [] and tails[3] == [], tails
    table = torchx("sweep", "status", handle).stdout.splitlines()
    assert table[2].split()[-1] == "REASON", table
    rows = {line.split()[0]: line for line in table[3:]}
    assert rows["1"].endswith("bad code 1") and rows["2"].endswith("bad code 1"), table
    assert "stopped after 2 failed trials" in rows["3"], table
    # The driver's own log: what it submitted, how each trial ended, the end.
    driver = torchx("log", "--driver", handle).stdout
    assert re.search(r"^driver \S+Z driver started \(pid \d+\): 5 children\b", driver, re.M), driver
    assert re.search(r"^driver \S+Z trial 1: submitted as local_cwd://torchx/\S+", driver, re.M), driver
    assert "trial 1: FAILED" in driver and "trial 3: skipped (not run: the sweep stopped after 2 failed trials" in driver, driver
    assert re.search(r"sweep ended FAILED: 2 of 5 trials failed", driver), driver
    res = torchx("log", "--driver", f"{handle}/1", check=False)
    assert res.returncode == 2 and "give its handle alone" in res.stderr, res.stderr


def test_a_running_sweeps_resources_are_its_running_trials(torchx):
    # `status --resources` (and `top`) of a sweep: each running trial's replicas, named after the
    # trial, and their sum.
    handle = torchx("sweep", "run", "-p", "x=30,31", "utils.sh", "sleep", "@{x}").stdout.split()[0]
    deadline = time.monotonic() + 60
    while True:
        out = torchx("status", "--resources", handle).stdout
        if "TOTAL (2 replicas)" in out:
            break
        assert time.monotonic() < deadline, out
        time.sleep(0.5)
    assert re.search(r"^  trial 0/sh/0 ", out, re.M) and re.search(r"^  trial 1/sh/0 ", out, re.M), out
    torchx("cancel", handle)
    view = torchx.wait_sweep(handle, {"CANCELLED"}, timeout=60)
    assert "no child of this sweep is running" in torchx("status", "--resources", handle).stdout, view


def test_an_objective_no_trial_reports_is_named_with_the_metric_meant(torchx):
    # A typo'd objective (`los`; the trials report `loss`): said while it runs, and the sweep, having
    # no result, ends FAILED saying so.
    torchx.write("report.py", "import sys, time\n"
                 "from torchx.tracker import app_run_from_env\n"
                 "app_run_from_env().add_metadata(loss=float(sys.argv[1]), step=1)\n"
                 "time.sleep(float(sys.argv[2]))\n")
    handle = torchx("sweep", "run", "--objective", "los", "-p", "x=0.1,0.2", "-p", "pause=4", "utils.sh",
                    sys.executable, "report.py", "@{x}", "@{pause}").stdout.split()[0]
    deadline = time.monotonic() + 60
    while True:
        view = torchx.sweep(handle)
        if view["objective_unreported"] or view["state"] in (SUCCEEDED, "FAILED", "CANCELLED"):
            break
        assert time.monotonic() < deadline, view
        time.sleep(0.5)
    assert view["objective_unreported"] == "objective `los` not reported; did you mean `loss`?", view
    assert "warning: objective `los` not reported; did you mean `loss`?" in torchx("sweep", "status", handle).stdout
    view = torchx.wait_sweep(handle, {SUCCEEDED, "FAILED", "CANCELLED"}, timeout=120)
    assert view["state"] == "FAILED" and view["msg"] == "objective `los` not reported; did you mean `loss`?", view
    assert all(t["state"] == SUCCEEDED for t in view["trials"]), view


def test_driver_killed_mid_sweep_resumes_without_running_a_trial_twice(torchx):
    torchx.write("trial.sh", 'echo "$TORCHX_TRIAL_INDEX" >> ran.txt; sleep "$1"\n')
    res = torchx("sweep", "run", "--max_parallel", "2", "-p", "t=2,2,2,2,2,2", "--name", "resume", "utils.sh", "sh",
                 "trial.sh", "@{t}")
    handle = res.stdout.split()[0]
    sweep_id = handle.rsplit("/", 1)[1]
    # Killed while trials run and the driver waits on them: the third and fourth trials have
    # started and nothing is being submitted (a trial claimed but not recorded when its driver
    # dies is failed rather than submitted again: the unit tests cover that case).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        view = torchx.sweep(handle)
        started = [t for t in view["trials"] if t["handle"]]
        if len(started) == 4 and sum(1 for t in started if t["state"] == "RUNNING") == 2:
            break
        time.sleep(0.1)
    assert kill_driver_and_watchdog(sweep_id) == 2  # as a reboot would: nothing revives it but a call
    time.sleep(0.5)
    assert watchdog_and_driver(sweep_id) == (None, None)
    view = torchx.wait_sweep(handle, {SUCCEEDED, "FAILED"}, timeout=120)  # a status call restarts the driver
    assert view["state"] == SUCCEEDED, view
    ran = sorted(int(x) for x in (torchx.cwd / "ran.txt").read_text().split())
    assert ran == [0, 1, 2, 3, 4, 5], ran  # each trial ran once
    assert max_overlap(view["trials"]) <= 2


def test_a_driver_killed_20_times_loses_no_trial_and_fails_none_that_ran(torchx):
    # A 20-trial sweep, at most 3 at once, whose driver is killed 20 times, each 10-90 ms after a
    # status call revived it: wherever a kill lands (claiming, submitting, recording), the next
    # driver adopts what was submitted, claims again what was not, and runs nothing twice. Each
    # trial writes its marker a moment after it starts: what counts is work done (a start the
    # launcher abandoned is stopped within milliseconds; docs/reliability.md).
    import random
    rng = random.Random(int(os.environ.get("TORCHX_FAULT_SEED", "7")))
    kills = int(os.environ.get("TORCHX_DRIVER_KILLS", "20"))
    torchx.write("trial.sh", 'sleep 0.2; echo "$TORCHX_TRIAL_INDEX" >> ran.txt; sleep 0.3\n')
    handle = torchx("sweep", "run", "--max_parallel", "3", "-p", "i=" + ",".join(str(i) for i in range(20)),
                    "--name", "killed", "utils.sh", "sh", "trial.sh", "@{i}").stdout.split()[0]
    sweep_id = handle.rsplit("/", 1)[1]
    done = 0
    for _ in range(kills):
        view = torchx.sweep(handle)  # revives a dead driver
        if view["state"] in (SUCCEEDED, "FAILED", "CANCELLED"):
            break
        time.sleep(rng.uniform(0.010, 0.090))
        # The driver alone, as the OOM killer picks one process: its watchdog replaces it at once
        # (and, past 5 deaths a minute, leaves it to this loop's next status call).
        _, driver = watchdog_and_driver(sweep_id)
        if driver:
            os.kill(driver, signal.SIGKILL)
            done += 1
    view = torchx.wait_sweep(handle, {SUCCEEDED, "FAILED", "CANCELLED"}, timeout=300)
    ran = [int(x) for x in (torchx.cwd / "ran.txt").read_text().split()]
    assert sorted(ran) == list(range(20)), (done, sorted(ran), view)  # each ran, once
    assert view["state"] == SUCCEEDED, (done, view)
    assert all(t["state"] == SUCCEEDED for t in view["trials"]), view
    assert done >= min(kills, 5), done  # the kills happened while it ran


def test_cancel_leaves_no_trial_running(torchx):
    # Durations no other suite's replicas sleep (a concurrent suite's `sleep 60` is not ours).
    res = torchx("sweep", "run", "--max_parallel", "2", "-p", "t=60.71,60.72,60.73,60.74", "utils.sh", "sleep", "@{t}")
    handle = res.stdout.split()[0]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        view = torchx.sweep(handle)
        if sum(1 for t in view["trials"] if t["state"] == "RUNNING") == 2:
            break
        time.sleep(0.2)
    torchx("cancel", handle)
    view = torchx.wait_sweep(handle, {"CANCELLED"}, timeout=60)
    started = [t for t in view["trials"] if t["handle"]]
    assert len(started) == 2
    for t in started:
        status = json.loads(torchx("status", "--json", t["handle"]).stdout)
        assert status["state"] == "CANCELLED", status
    ps = subprocess.run(["pgrep", "-f", r"sleep 60\.7[1-4]"], capture_output=True, text=True)
    assert ps.stdout.strip() == "", ps.stdout


def test_cancel_right_after_the_driver_died_starts_no_new_trial(torchx):
    # The driver is killed while trial 0 runs, and trial 0 ends with no driver to start trial 1. A
    # cancel then is recorded before anything reads the sweep (a read revives the driver, which
    # would start trial 1 first): trial 1 never runs.
    torchx.write("trial.sh", 'echo "$TORCHX_TRIAL_INDEX" >> ran.txt; sleep "$1"\n')
    res = torchx("sweep", "run", "--max_parallel", "1", "-p", "t=1.5,1.51,1.52,1.53", "--name", "cancelled",
                 "utils.sh", "sh", "trial.sh", "@{t}")
    handle = res.stdout.split()[0]
    sweep_id = handle.rsplit("/", 1)[1]
    deadline = time.monotonic() + 60
    trial0 = None
    while trial0 is None:
        assert time.monotonic() < deadline, "trial 0 never started"
        trial0 = next((t["handle"] for t in torchx.sweep(handle)["trials"] if t["handle"]), None)
        time.sleep(0.05)
    kill_driver_and_watchdog(sweep_id)
    while json.loads(torchx("status", "--json", trial0).stdout)["state"] != SUCCEEDED:  # a local_cwd status: no revival
        assert time.monotonic() < deadline, "trial 0 never ended"
        time.sleep(0.1)
    assert watchdog_and_driver(sweep_id) == (None, None)
    torchx("cancel", handle)
    view = torchx.wait_sweep(handle, {"CANCELLED", "FAILED", SUCCEEDED}, timeout=60)
    assert view["state"] == "CANCELLED", view
    time.sleep(1)
    assert (torchx.cwd / "ran.txt").read_text().split() == ["0"]
    assert [t["index"] for t in view["trials"] if t["handle"]] == [0], view


@pytest.mark.parametrize("args,want", [
    (["-p", "lr=0.1", "utils.sh", "echo", "@{lx}"], "args[1]: placeholder `@{lx}` names no swept parameter"),
    (["-p", "zz=1", "utils.sh", "echo", "hi"], "space.parameters.zz: `zz` is neither a parameter of component utils.sh"),
    (["-p", "num_replicas=1,two", "utils.sh", "echo", "hi"], "trial 1 (num_replicas=two)"),
    (["-p", "lr=uniform(1,0)", "--trials", "2", "utils.sh", "echo", "@{lr}"], "low (1) must be below high (0)"),
    (["-p", "lr=0.1", "-s", "nosuch", "utils.sh", "echo", "@{lr}"], "nosuch"),
])
def test_a_bad_sweep_is_an_error_and_nothing_is_recorded(torchx, args, want):
    res = torchx("sweep", "run", *args, check=False)
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert want in res.stderr, res.stderr
    assert not (torchx.state / "sweeps").exists() or not list((torchx.state / "sweeps").glob("*.json"))
    assert "local_cwd://" not in torchx("list", "-s", "local_cwd").stdout


def test_a_bad_sweep_file_names_the_field(torchx):
    torchx.write("bad.yaml", "component: utils.sh\nspace: {type: random, parameters: {a: [1]}}\n")
    res = torchx("sweep", "run", "bad.yaml", check=False)
    assert res.returncode == 2 and "bad.yaml: space.trials: required" in res.stderr, res.stderr


def have_ax() -> bool:
    return subprocess.run(["python3", "-c", "import ax"], capture_output=True).returncode == 0


BOOTH_PY = """
import sys
from torchx.tracker import app_run_from_env
x1, x2 = float(sys.argv[1]), float(sys.argv[2])
app_run_from_env().add_metadata(booth=(x1 + 2 * x2 - 7) ** 2 + (2 * x1 + x2 - 5) ** 2)
"""

INITIAL = {"CenterOfSearchSpace", "Sobol"}  # Ax's initial (non-model) generation nodes


@pytest.mark.skipif(not have_ax() and "ax" not in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","),
                    reason="ax is not installed")
def test_an_ax_sweep_of_booth_improves_on_its_initial_trials(torchx):
    torchx.write("booth.py", BOOTH_PY)
    torchx.write("ax.yaml", """
name: booth
component: utils.sh
args: [python3, booth.py, "@{x1}", "@{x2}"]
max_parallel: 1
objective: booth
space:
  type: ax
  seed: 0
  trials: 15
  parameters:
    x1: {low: -10.0, high: 10.0}
    x2: {low: -10.0, high: 10.0}
""")
    assert "proposed by Ax" in torchx("sweep", "run", "--dryrun", "ax.yaml").stdout
    res = torchx("sweep", "run", "--wait", "ax.yaml", timeout=600)
    view = torchx.sweep(res.stdout.split()[0])
    assert view["state"] == SUCCEEDED, view
    trials = sorted(view["trials"], key=lambda t: t["index"])
    assert len(trials) == 15 and all(t["objective"] is not None for t in trials), trials
    generators = [t["generator"] for t in trials]
    # The first trials are Ax's initial ones (the centre, then Sobol points); the later ones come
    # from its model (recorded per trial). Ax keeps making Sobol points while too few trials have
    # reported, so one trial at a time (every earlier trial reported when Ax is asked) makes the
    # switch happen at the same trial on every machine; batches are the local grid's business.
    assert generators[0] in INITIAL, generators
    assert all(g not in INITIAL for g in generators[6:]), generators
    initial = min(t["objective"] for t in trials if t["generator"] in INITIAL)
    model = min(t["objective"] for t in trials if t["generator"] not in INITIAL)
    assert model < initial, (model, initial, generators)
    assert view["best"] == min(trials, key=lambda t: t["objective"])["index"]
    # Ax's state is kept with the sweep's record: a restarted driver goes on from it.
    state = torchx.state / "sweeps" / (res.stdout.split()[0].rsplit("/", 1)[1] + ".results.ax-state")
    assert state.exists()
