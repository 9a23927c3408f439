"""A Python scheduler plugin for the tests: `demo_inline` runs each replica to completion inside
`schedule` (a tiny batch system), keeping state and logs in files under $DEMO_INLINE_DIR, so
that any later process can describe it."""

import json
import os
import subprocess
from typing import Any, Optional

from torchx.plugins import register
from torchx.schedulers.api import DescribeAppResponse, ListAppResponse, Scheduler
from torchx.specs import AppDryRunInfo, AppState, ReplicaStatus, RoleStatus, runopts


def _root() -> str:
    return os.environ.get("DEMO_INLINE_DIR", "/tmp/demo-inline")


class DemoInlineScheduler(Scheduler):
    def _run_opts(self) -> runopts:
        opts = runopts()
        opts.add("greeting", type_=str, help="prefixed to nothing, just checked", default="hi")
        return opts

    def _submit_dryrun(self, app: Any, cfg: Any) -> AppDryRunInfo:
        cmds = [(r.name, i, [r.entrypoint, *r.args], dict(r.env)) for r in app.roles for i in range(r.num_replicas)]
        return AppDryRunInfo({"name": app.name, "cmds": cmds, "greeting": cfg["greeting"]}, lambda req: json.dumps(req))

    def schedule(self, dryrun_info: AppDryRunInfo) -> str:
        req = dryrun_info.request
        app_id = f"{req['name']}-{len(os.listdir(_root())) if os.path.isdir(_root()) else 0}"
        d = os.path.join(_root(), app_id)
        os.makedirs(d, exist_ok=True)
        codes = []
        for role, i, argv, env in req["cmds"]:
            with open(os.path.join(d, f"{role}_{i}.log"), "w") as log:
                codes.append((role, i, subprocess.run(argv, env={**os.environ, **env}, stdout=log, stderr=log).returncode))
        with open(os.path.join(d, "state.json"), "w") as f:
            json.dump({"name": req["name"], "codes": codes}, f)
        return app_id

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        path = os.path.join(_root(), app_id, "state.json")
        if not os.path.exists(path):
            return None
        with open(path) as f:
            st = json.load(f)
        ok = all(code == 0 for _, _, code in st["codes"])
        roles = {}
        for role, i, code in st["codes"]:
            roles.setdefault(role, []).append(
                ReplicaStatus(i, AppState.SUCCEEDED if code == 0 else AppState.FAILED, role, "localhost"))
        return DescribeAppResponse(app_id=app_id, state=AppState.SUCCEEDED if ok else AppState.FAILED,
                                   num_restarts=0, roles_statuses=[RoleStatus(r, reps) for r, reps in roles.items()])

    def _cancel_existing(self, app_id: str) -> None:
        pass  # apps finish inside schedule()

    def list(self) -> Any:
        out = []
        for app_id in sorted(os.listdir(_root())) if os.path.isdir(_root()) else []:
            d = self.describe(app_id)
            if d is not None:
                out.append(ListAppResponse(app_id, d.state))
        return out

    def log_iter(self, app_id: str, role_name: str, k: int = 0, *args: Any, **kwargs: Any) -> Any:
        with open(os.path.join(_root(), app_id, f"{role_name}_{k}.log")) as f:
            return f.read().splitlines(keepends=True)


@register.scheduler()
def demo_inline(session_name: str, **kwargs: Any) -> DemoInlineScheduler:
    return DemoInlineScheduler("demo_inline", session_name)
