"""A Python scheduler plugin behind the core's JSON scheduler protocol (src/plugins/json_scheduler.h):
used in-process by the extension and, for the CLI, by the bridge process.

The core's scheduler template has already done its part when a call arrives here (the cfg is
resolved against the run options and the app validated before a dry run; the app described and
found live before a cancel), so the adapter calls the plugin's hooks (``_submit_dryrun``,
``_cancel_existing``), not the public methods that would do that part again in Python.
"""

import itertools
import json
from typing import Any, Dict

from torchx.schedulers.api import Scheduler, _dryrun_resolved
from torchx.specs.api import AppState, from_json


def _overrides(scheduler: Any, method: str) -> bool:
    """Whether the plugin replaced one of the base class's public template methods (or is not a
    Scheduler at all): then that method is its contract and is called instead of the hook."""
    return getattr(type(scheduler), method, None) is not getattr(Scheduler, method)


class SchedulerAdapter:
    _tokens = itertools.count(1)

    def __init__(self, scheduler: Any) -> None:
        self._s = scheduler
        self._pending: Dict[str, Any] = {}

    def runopts_json(self) -> str:
        opts = self._s.run_opts()
        return opts._to_json() if hasattr(opts, "_to_json") else "[]"

    def dryrun(self, request_json: str) -> str:
        req = json.loads(request_json)
        app = from_json(req["app"])
        if _overrides(self._s, "submit_dryrun"):
            info = self._s.submit_dryrun(app, req["cfg"])
        else:
            info = _dryrun_resolved(self._s, app, req["cfg"])
        token = f"py-{next(self._tokens)}"
        self._pending[token] = info
        return json.dumps({"request": repr(info), "payload": token})

    def schedule(self, payload: str) -> str:
        info = self._pending.pop(payload, None)
        if info is None:
            raise ValueError("schedule: this request was not made by this scheduler's dry run")
        return str(self._s.schedule(info))

    def describe(self, app_id: str) -> str:
        d = self._s.describe(app_id)
        if d is None:
            return "null"
        return json.dumps(
            {
                "state": AppState(d.state).name,
                "num_restarts": max(0, d.num_restarts),
                "roles": [r.to_json() for r in d.roles_statuses],
                "msg": d.msg if d.msg != "<NONE>" else "",
                "structured_error_msg": d.structured_error_msg,
                "url": d.ui_url,
            },
            default=int,
        )

    def cancel(self, app_id: str) -> str:
        if _overrides(self._s, "cancel"):
            self._s.cancel(app_id)
        else:
            self._s._cancel_existing(app_id)
        return "ok"

    def list(self) -> str:
        return json.dumps([{"app_id": a.app_id, "state": int(a.state), "name": getattr(a, "name", "")}
                           for a in self._s.list()])

    def logs(self, request_json: str) -> str:
        req = json.loads(request_json)
        lines = self._s.log_iter(req["app_id"], req["role"], req["k"])
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
