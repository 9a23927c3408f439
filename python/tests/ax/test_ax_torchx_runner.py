"""Ax's own TorchXRunner and TorchXMetric (ax.runners.torchx / ax.metrics.torchx), unchanged,
driving this package: the scenarios of Ax's test_torchx.py, with the results checked (Ax's own
test only checks that nothing raises)."""


import pytest

pytest.importorskip("ax")

from ax.core import Experiment, Objective, OptimizationConfig, ParameterType, RangeParameter, SearchSpace  # noqa: E402
from ax.core.base_trial import TrialStatus  # noqa: E402
from ax.generation_strategy.dispatch_utils import choose_generation_strategy_legacy  # noqa: E402
from ax.metrics.torchx import TorchXMetric  # noqa: E402
from ax.orchestration.orchestrator import Orchestrator, OrchestratorOptions  # noqa: E402
from ax.runners.torchx import TorchXRunner  # noqa: E402
from ax.utils.common.constants import Keys  # noqa: E402

from conftest import booth  # noqa: E402
from torchx import specs  # noqa: E402
from torchx.components import utils  # noqa: E402
from torchx.runner import get_runner  # noqa: E402


def slow_booth(x1: float, x2: float, trial_idx: int = 0, tracker_base: str = "/tmp") -> specs.AppDef:
    """A trial that runs until it is stopped."""
    return specs.AppDef(
        name="slow-booth",
        roles=[specs.Role(name="trial", image="", entrypoint="sleep", args=["120"],
                          resource=specs.Resource(cpu=1, gpu=0, memMB=64))],
    )


def experiment(name, runner):
    metric = TorchXMetric(name="booth_eval")
    params = [
        RangeParameter(name="x1", lower=-10.0, upper=10.0, parameter_type=ParameterType.FLOAT),
        RangeParameter(name="x2", lower=-10.0, upper=10.0, parameter_type=ParameterType.FLOAT),
    ]
    return Experiment(
        name=name,
        search_space=SearchSpace(parameters=params),
        optimization_config=OptimizationConfig(objective=Objective(metric=metric, minimize=True)),
        runner=runner,
        is_test=True,
        properties={Keys.IMMUTABLE_SEARCH_SPACE_AND_OPT_CONF: True},
        tracking_metrics=[metric],
    )


def orchestrator(exp, **options):
    gs = choose_generation_strategy_legacy(search_space=exp.search_space, max_parallelism_cap=options.pop("cap", None))
    return Orchestrator(
        experiment=exp,
        generation_strategy=gs,
        options=OrchestratorOptions(init_seconds_between_polls=0.1, min_seconds_before_poll=0.1, **options),
    )


def assert_trials_completed_with_booth(exp, expected):
    assert len(exp.trials) == expected
    assert {t.status for t in exp.trials.values()} == {TrialStatus.COMPLETED}
    df = exp.fetch_data().df
    assert len(df) == expected
    for _, row in df.iterrows():
        arm = exp.trials[int(row["trial_index"])].arm
        assert row["mean"] == pytest.approx(booth(arm.parameters["x1"], arm.parameters["x2"]))
    for t in exp.trials.values():
        status = get_runner().status(t.run_metadata["torchx_app_handle"])
        assert status.state == specs.AppState.SUCCEEDED


@pytest.fixture
def tracker(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return str(tmp_path / "tracker")


def test_sequential_rounds(tracker):
    runner = TorchXRunner(tracker_base=tracker, component=utils.booth, orchestrator="local_cwd",
                          cfg={"prepend_cwd": True})
    exp = experiment("torchx_booth_sequential", runner)
    orch = orchestrator(exp)
    for _ in range(3):
        orch.run_n_trials(max_trials=2)
    assert_trials_completed_with_booth(exp, 6)
    orch.report_results()


def test_parallel_batches(tracker):
    runner = TorchXRunner(tracker_base=tracker, component=utils.booth, orchestrator="local_cwd",
                          cfg={"prepend_cwd": True})
    exp = experiment("torchx_booth_parallel", runner)
    orch = orchestrator(exp, cap=2, run_trials_in_batches=True, total_trials=6)
    orch.run_all_trials()
    assert_trials_completed_with_booth(exp, 6)


def test_default_orchestrator_name_local(tracker):
    """Ax's default scheduler name "local" is a registered alias of local_cwd here."""
    runner = TorchXRunner(tracker_base=tracker, component=utils.booth, cfg={"prepend_cwd": True})
    exp = experiment("torchx_booth_local", runner)
    orchestrator(exp).run_n_trials(max_trials=5)
    assert_trials_completed_with_booth(exp, 5)
    assert all(t.run_metadata["torchx_app_handle"].startswith("local://") for t in exp.trials.values())


def test_stop_cancels_the_trial_job(tracker):
    runner = TorchXRunner(tracker_base=tracker, component=slow_booth, orchestrator="local_cwd")
    exp = experiment("torchx_booth_stop", runner)
    orch = orchestrator(exp)
    orch.run(max_new_trials=3)
    trial = orch.running_trials[0]
    handle = trial.run_metadata["torchx_app_handle"]
    assert runner.stop(trial, reason="some_reason") == {"reason": "some_reason"}
    status = get_runner().wait(handle, wait_interval=1)
    assert status.state == specs.AppState.CANCELLED
    assert trial.index in runner.poll_trial_status([trial])[TrialStatus.ABANDONED]
    for t in orch.running_trials:  # leave nothing running
        get_runner().cancel(t.run_metadata["torchx_app_handle"])


def test_batch_trials_rejected(tracker):
    from ax.core import BatchTrial

    runner = TorchXRunner(tracker_base=tracker, component=utils.booth, orchestrator="local_cwd")
    with pytest.raises(ValueError):
        runner.run(trial=BatchTrial(experiment("batch", runner)))
