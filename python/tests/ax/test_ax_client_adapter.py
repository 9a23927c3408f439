"""torchx.integrations.ax with Ax's Client API: JSON-safe metadata, results, stop, restart."""

import json
import subprocess
import sys

import pytest

pytest.importorskip("ax")

from ax.api.client import Client  # noqa: E402
from ax.api.configs import RangeParameterConfig  # noqa: E402
from ax.core.trial_status import TrialStatus  # noqa: E402

from conftest import booth  # noqa: E402
from torchx import specs  # noqa: E402
from torchx.components import utils  # noqa: E402
from torchx.integrations.ax import TorchXTrialMetric, TorchXTrialRunner  # noqa: E402
from torchx.runner import get_runner  # noqa: E402


def client(runner):
    c = Client()
    c.configure_experiment(
        parameters=[
            RangeParameterConfig(name="x1", parameter_type="float", bounds=(-10.0, 10.0)),
            RangeParameterConfig(name="x2", parameter_type="float", bounds=(-10.0, 10.0)),
        ],
        name="booth",
    )
    c.configure_optimization(objective="-booth_eval")
    c.configure_runner(runner)
    c.configure_metrics([TorchXTrialMetric("booth_eval")])
    return c


def test_client_runs_booth_trials(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = TorchXTrialRunner(utils.booth, tracker_base=str(tmp_path / "tracker"), cfg={"prepend_cwd": True})
    c = client(runner)
    c.run_trials(max_trials=5, parallelism=2)
    exp = c._experiment
    assert len(exp.trials) == 5
    assert {t.status for t in exp.trials.values()} == {TrialStatus.COMPLETED}
    for t in exp.trials.values():
        meta = t.run_metadata
        assert json.loads(json.dumps(meta)) == meta and set(meta) >= {"app_handle", "tracker_base"}
        params = t.arm.parameters
        value = TorchXTrialMetric("booth_eval").fetch(t.index, meta)[1]
        assert value == pytest.approx(booth(params["x1"], params["x2"]))


def test_stop_and_poll_from_another_process(tmp_path):
    runner = TorchXTrialRunner(
        lambda x1, x2: specs.AppDef("sleeper", [specs.Role("t", "", entrypoint="sleep", args=["120"],
                                                           resource=specs.Resource(cpu=1, gpu=0, memMB=64))]),
        tracker_base=str(tmp_path),
    )
    meta = runner.run_trial(0, {"x1": 1.0, "x2": 3.0})
    # Only the JSON metadata crosses: a new process polls and stops the trial.
    code = (
        "import json, sys; from torchx.integrations.ax import TorchXTrialRunner;"
        "from torchx.components import utils;"
        "r = TorchXTrialRunner(utils.booth, tracker_base='/unused'); m = json.loads(sys.argv[1]);"
        "print(r.poll_trial(0, m).name); r.stop_trial(0, m)"
    )
    out = subprocess.run([sys.executable, "-c", code, json.dumps(meta)], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.split()[-1] in ("RUNNING", "STAGED")
    assert get_runner().wait(meta["app_handle"]).state == specs.AppState.CANCELLED
    assert runner.poll_trial(0, meta) == TrialStatus.ABANDONED
    get_runner().delete(meta["app_handle"])
    assert runner.poll_trial(0, meta) == TrialStatus.FAILED
