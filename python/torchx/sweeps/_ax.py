"""The Ax side of ``space.type: ax`` sweeps: the sweep's driver (C++) starts ``python -m
torchx.sweeps._ax`` once and asks it, one JSON line per request on stdin, for the next trials;
replies go to the file descriptor in $TORCHX_BRIDGE_FD (one JSON line each).

Request: ``{"state": path, "name", "seed", "parameters": [{"name", "type": "float"|"int"|"choice",
"low", "high", "log_scale", "values"}], "objective": {"metric", "minimize"}, "ended": [{"index",
"objective" (null: failed, not run or no report)}], "valued": [index...], "count": k}``, indices
being Ax's. Reply: ``{"trials": [{"index", "values", "generator"}]}`` or ``{"error": message}``.

Ax's own state (its experiment and generation strategy) is saved to ``state`` after every
request, so a driver restarted after a crash goes on where Ax was: the trials already proposed
keep their Ax indices (the sweep records each trial's) and the model its data. Trials that ended
are completed with their objective (or marked failed) before new ones are proposed; a trial Ax
proposed that the sweep never recorded (its driver died in between) is abandoned. Ax may propose
fewer than asked while it waits for data (its initial Sobol batch).
"""

import json
import os
import sys
from typing import Any, Dict, List, Literal


def _client(req: Dict[str, Any]) -> Any:
    from ax import ChoiceParameterConfig, Client, RangeParameterConfig

    if os.path.exists(req["state"]):
        return Client.load_from_json_file(req["state"])
    client = Client(random_seed=req["seed"])
    params: List[Any] = []
    for p in req["parameters"]:
        if p["type"] == "choice":
            values = p["values"]
            kind: Literal["str", "bool", "int", "float"] = (
                "str" if any(isinstance(v, str) for v in values)
                else "bool" if all(isinstance(v, bool) for v in values)
                else "int" if all(isinstance(v, int) for v in values)
                else "float")
            params.append(ChoiceParameterConfig(name=p["name"], parameter_type=kind, values=values))
        else:
            params.append(RangeParameterConfig(name=p["name"], parameter_type=p["type"], bounds=(p["low"], p["high"]),
                                               scaling="log" if p.get("log_scale") else "linear"))
    client.configure_experiment(parameters=params, name=req["name"])
    metric = req["objective"]["metric"]
    client.configure_optimization(objective=("-" if req["objective"]["minimize"] else "") + metric)
    return client


def _answer(req: Dict[str, Any]) -> Dict[str, Any]:
    from ax.core.trial_status import TrialStatus

    client = _client(req)
    trials = client._experiment.trials
    metric = req["objective"]["metric"]
    for e in req["ended"]:
        t = trials.get(e["index"])
        if t is None or t.status != TrialStatus.RUNNING:
            continue  # completed by an earlier request, or never proposed here
        if e["objective"] is None:
            client.mark_trial_failed(trial_index=e["index"])
        else:
            client.complete_trial(trial_index=e["index"], raw_data={metric: e["objective"]})
    valued = set(req.get("valued", []))
    for index, t in trials.items():
        if t.status == TrialStatus.RUNNING and index not in valued:
            client.mark_trial_abandoned(trial_index=index)
    proposed = client.get_next_trials(max_trials=req["count"]) if req["count"] > 0 else {}
    out = []
    for index, values in sorted(proposed.items()):
        run = trials[index].generator_runs[0]
        generator = getattr(run, "_generation_node_name", None) or getattr(run, "_generator_key", None) or ""
        out.append({"index": index, "values": values, "generator": str(generator)})
    tmp = req["state"] + ".tmp"
    client.save_to_json_file(tmp)
    os.replace(tmp, req["state"])
    return {"trials": out}


def main() -> None:
    import logging

    logging.getLogger("ax").setLevel(logging.WARNING)
    out = os.fdopen(int(os.environ["TORCHX_BRIDGE_FD"]), "w")
    for line in sys.stdin:
        try:
            reply = _answer(json.loads(line))
        except Exception as e:  # noqa: BLE001 - every failure goes back to the driver, named
            reply = {"error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
