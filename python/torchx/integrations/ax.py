"""Ax's Client API (``ax.api``) over torchx: an IRunner that launches one app per trial and an
IMetric that reads the trial's result from its tracker.

Unlike Ax's legacy ``ax.runners.torchx.TorchXRunner``, whose run metadata holds a live Runner,
the metadata here is only ``{"app_handle": str, "tracker_base": str}``: JSON-safe, so Ax can
save the experiment and poll or stop its trials from another process after a restart (any
``get_runner()`` can follow any handle).

    client.configure_runner(TorchXTrialRunner(utils.booth, tracker_base="/tmp/booth", scheduler="local"))
    client.configure_metrics([TorchXTrialMetric("booth_eval")])
"""

import inspect
from collections.abc import Mapping
from typing import Any, Callable, Dict, Optional

from ax.api.protocols.metric import IMetric
from ax.api.protocols.runner import IRunner
from ax.core.trial_status import TrialStatus

from torchx.runner import get_runner
from torchx.runtime.tracking import FsspecResultTracker
from torchx.specs import AppDef, AppState, CfgVal

# Ax's own mapping (ax/runners/torchx.py), so both adapters agree.
_STATUS: Dict[AppState, TrialStatus] = {
    AppState.UNSUBMITTED: TrialStatus.CANDIDATE,
    AppState.SUBMITTED: TrialStatus.STAGED,
    AppState.PENDING: TrialStatus.STAGED,
    AppState.RUNNING: TrialStatus.RUNNING,
    AppState.SUCCEEDED: TrialStatus.COMPLETED,
    AppState.CANCELLED: TrialStatus.ABANDONED,
    AppState.FAILED: TrialStatus.FAILED,
    AppState.UNKNOWN: TrialStatus.FAILED,
}


class TorchXTrialRunner(IRunner):
    """Runs ``component(**const_params, **parameterization)`` per trial on ``scheduler``.
    ``trial_idx`` and ``tracker_base`` are passed when the component takes them."""

    def __init__(
        self,
        component: Callable[..., AppDef],
        tracker_base: str,
        scheduler: str = "local",
        cfg: Optional[Mapping[str, CfgVal]] = None,
        component_const_params: Optional[Dict[str, Any]] = None,
    ) -> None:
        self._component = component
        self._tracker_base = tracker_base
        self._scheduler = scheduler
        self._cfg = dict(cfg or {})
        self._const = dict(component_const_params or {})
        self._params = set(inspect.signature(component).parameters)
        self._runner = get_runner()

    def run_trial(self, trial_index: int, parameterization: Mapping[str, Any]) -> Dict[str, Any]:
        params: Dict[str, Any] = {**self._const, **parameterization}
        if "trial_idx" in self._params:
            params["trial_idx"] = trial_index
        if "tracker_base" in self._params:
            params["tracker_base"] = self._tracker_base
        handle = self._runner.run(self._component(**params), self._scheduler, self._cfg)
        return {"app_handle": handle, "tracker_base": self._tracker_base}

    def poll_trial(self, trial_index: int, trial_metadata: Mapping[str, Any]) -> TrialStatus:
        status = self._runner.status(trial_metadata["app_handle"])
        if status is None:  # the scheduler no longer knows the app (deleted, or another machine)
            return TrialStatus.FAILED
        return _STATUS[status.state]

    def stop_trial(self, trial_index: int, trial_metadata: Mapping[str, Any]) -> Dict[str, Any]:
        self._runner.cancel(trial_metadata["app_handle"])
        return {"stopped": trial_metadata["app_handle"]}


class TorchXTrialMetric(IMetric):
    """Reads ``name`` (or ``name/mean`` and ``name/sem``) from the trial's tracker entry."""

    def fetch(self, trial_index: int, trial_metadata: Mapping[str, Any]) -> Any:
        result = FsspecResultTracker(trial_metadata["tracker_base"])[trial_index]
        if self.name in result:
            return 0, float(result[self.name])
        mean, sem = f"{self.name}/mean", f"{self.name}/sem"
        if mean in result:
            return 0, (float(result[mean]), float(result[sem]) if sem in result else float("nan"))
        raise KeyError(f"trial {trial_index}: no `{self.name}` in its result {sorted(result)}")
