"""A Python scheduler plugin as TorchX plugin authors write one, for the scheduler conformance
suite: the core reaches it through the JSON bridge (`python -m torchx.plugins._bridge`), as the
CLI reaches every Python plugin. Its engine is `sh`: an app is a directory under
$CONFORMANCE_PY_DIR whose replicas run detached (their own session), each writing its log and,
when it ends, its exit code; any later process can describe, cancel or read it."""

import json
import os
import signal
import subprocess
import uuid
from typing import Any, Iterable, List, Mapping, Optional

from torchx.plugins import register
from torchx.schedulers.api import DescribeAppResponse, ListAppResponse, Scheduler
from torchx.specs import AppDef, AppDryRunInfo, AppState, ReplicaStatus, RoleStatus, macros, runopts

# One replica: its command runs in the background, this shell records how it ended.
_REPLICA = 'cd "$1" && "${@:2}" > log 2>&1; echo $? > exit.tmp && mv exit.tmp exit'


def _root() -> str:
    return os.environ.get("CONFORMANCE_PY_DIR", "/tmp/conformance-py")


class ConformancePyScheduler(Scheduler):
    def _run_opts(self) -> runopts:
        opts = runopts()
        opts.add("retries", type_=int, default=0, help="accepted and recorded (checked for its type)")
        return opts

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, Any]) -> AppDryRunInfo:
        app_id = f"{app.name}-{uuid.uuid4().hex[:8]}"
        replicas = []
        for role in app.roles:
            for i in range(role.num_replicas):
                values = macros.Values(img_root="", app_id=app_id, replica_id=str(i), rank0_env="TORCHX_RANK0_HOST")
                r = values.apply(role)
                env = {**r.env, "TORCHX_RANK0_HOST": "localhost"}
                replicas.append({"role": role.name, "index": i, "argv": [r.entrypoint, *r.args], "env": env})
        request = {"app_id": app_id, "name": app.name, "replicas": replicas}
        return AppDryRunInfo(request, lambda req: json.dumps(req, indent=1))

    def schedule(self, dryrun_info: AppDryRunInfo) -> str:
        req = dryrun_info.request
        app_dir = os.path.join(_root(), req["app_id"])
        os.makedirs(app_dir)
        with open(os.path.join(app_dir, "app.json"), "w") as f:
            json.dump(req, f)
        pids = []
        for r in req["replicas"]:
            d = os.path.join(app_dir, f"{r['role']}-{r['index']}")
            os.makedirs(d)
            proc = subprocess.Popen(["bash", "-c", _REPLICA, "replica", d, *r["argv"]],
                                    env={**os.environ, **r["env"]}, start_new_session=True,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            pids.append(proc.pid)
        with open(os.path.join(app_dir, "pids"), "w") as f:
            f.write(" ".join(map(str, pids)))
        return req["app_id"]

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        app_dir = os.path.join(_root(), app_id)
        if not os.path.isfile(os.path.join(app_dir, "app.json")):
            return None
        with open(os.path.join(app_dir, "app.json")) as f:
            req = json.load(f)
        cancelled = os.path.exists(os.path.join(app_dir, "cancelled"))
        roles: dict = {}
        states = []
        for r in req["replicas"]:
            exit_file = os.path.join(app_dir, f"{r['role']}-{r['index']}", "exit")
            if os.path.exists(exit_file):
                with open(exit_file) as f:
                    state = AppState.SUCCEEDED if f.read().strip() == "0" else AppState.FAILED
            else:
                state = AppState.RUNNING
            states.append(state)
            roles.setdefault(r["role"], []).append(ReplicaStatus(r["index"], state, r["role"], "localhost"))
        if cancelled:
            state = AppState.CANCELLED
        elif AppState.FAILED in states:
            state = AppState.FAILED
        elif all(s == AppState.SUCCEEDED for s in states):
            state = AppState.SUCCEEDED
        else:
            state = AppState.RUNNING
        return DescribeAppResponse(app_id=app_id, state=state, num_restarts=0,
                                   roles_statuses=[RoleStatus(name, reps) for name, reps in roles.items()])

    def _cancel_existing(self, app_id: str) -> None:
        app_dir = os.path.join(_root(), app_id)
        d = self.describe(app_id)
        if d is None or d.state in (AppState.SUCCEEDED, AppState.FAILED, AppState.CANCELLED):
            return
        open(os.path.join(app_dir, "cancelled"), "w").close()
        with open(os.path.join(app_dir, "pids")) as f:
            for pid in f.read().split():
                try:
                    os.killpg(int(pid), signal.SIGKILL)
                except OSError:
                    pass

    def list(self, cfg: Optional[Mapping[str, Any]] = None) -> List[ListAppResponse]:
        out = []
        for app_id in sorted(os.listdir(_root())) if os.path.isdir(_root()) else []:
            d = self.describe(app_id)
            if d is not None:
                out.append(ListAppResponse(app_id, d.state))
        return out

    def log_iter(self, app_id: str, role_name: str, k: int = 0, *args: Any, **kwargs: Any) -> Iterable[str]:
        path = os.path.join(_root(), app_id, f"{role_name}-{k}", "log")
        if not os.path.exists(path):
            raise ValueError(f"no log for {role_name}/{k} of {app_id}")
        with open(path) as f:
            return f.read().splitlines(keepends=True)


@register.scheduler()
def conformance_py(session_name: str, **kwargs: Any) -> ConformancePyScheduler:
    return ConformancePyScheduler("conformance_py", session_name)
