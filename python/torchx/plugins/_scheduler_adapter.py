"""A Python scheduler object as one of the core's schedulers. Two faces over one set of calls: the
object-level calls the extension makes in this process (python/ext/py_scheduler.cc: torchx_plugins
schedulers and the scheduler objects a Python Runner is given), and the JSON protocol the CLI's
bridge process speaks (src/plugins/json_scheduler.h).

The core's Runner has done its part when a call arrives here: the app validated and TorchX's
variables put in every role, the options resolved, the app found live before a cancel, the log's
role checked. What is left is the object's own TorchX hooks, called in TorchX's order
(``run_opts().resolve``, ``_pre_build_validate``, ``build_workspaces``, ``_validate``,
``submit_dryrun``), so that a scheduler class written for TorchX behaves as under TorchX's Runner.

JSON cannot carry everything a Python caller hands a dry run: ``Role.overrides`` may hold futures and
callables, a workspace may be a ``Workspace`` object, and the caller may edit the returned
request before ``schedule``. The Python Runner therefore offers its objects for the call
(``offered_dry_run``); the dry run takes the caller's app (a copy sharing ``overrides``), gives it
the core's environment, and leaves the object's ``AppDryRunInfo`` for the Runner to return.
"""

import contextlib
import itertools
import threading
from datetime import datetime
from json import dumps as _dumps, loads as _loads  # bound at import: callers' tests patch json.dumps
from typing import Any, Callable, Dict, Iterator, Optional, Tuple

from torchx.schedulers.api import Scheduler, Stream, _dryrun_resolved
from torchx.specs.api import AppDef, AppState, Workspace, _copy_app, _overrides_detached, from_json, runopts, to_json


class _Offer:
    """What the Python Runner hands one dry run beside the app's JSON, and what it got back."""

    def __init__(self, app: AppDef, workspace: Any) -> None:
        self.app = app
        self.workspace = workspace
        self.info: Any = None


_offers = threading.local()  # the core calls back on the caller's thread


@contextlib.contextmanager
def offered_dry_run(app: AppDef, workspace: Any) -> Iterator[_Offer]:
    """Offers ``app`` and ``workspace`` to the Python scheduler object the next dry run on this
    thread reaches; the offer's ``info`` is then the object's AppDryRunInfo."""
    offer = _Offer(app, workspace)
    _offers.current = offer
    try:
        yield offer
    finally:
        _offers.current = None


def _take_offer() -> Optional[_Offer]:
    offer = getattr(_offers, "current", None)
    _offers.current = None
    return offer


def _overrides(scheduler: Any, method: str) -> bool:
    """Whether the object replaced one of the base class's public template methods (or is not a
    Scheduler at all): then that method is its contract and is called instead of the hook."""
    return getattr(type(scheduler), method, None) is not getattr(Scheduler, method)


class SchedulerAdapter:
    _tokens = itertools.count(1)
    _KEEP_SUBMITTED = 1024  # apps whose AppDef describe answers with (TorchX's local cache is 100)

    def __init__(self, scheduler: Any, name: str) -> None:
        self.scheduler = scheduler
        self._name = name
        self._pending: Dict[str, Any] = {}
        self._submitted: Dict[str, AppDef] = {}

    # ---- object-level calls (python/ext/py_scheduler.cc) ----

    def can_list(self) -> bool:
        return callable(getattr(self.scheduler, "list", None))

    def runopts_json(self) -> str:
        run_opts = getattr(self.scheduler, "run_opts", None)
        opts = run_opts() if callable(run_opts) else None
        return opts._to_json() if isinstance(opts, runopts) else "[]"  # a test double's: none

    def dryrun_app(self, app_json: str, cfg_json: str, scheduler: str) -> Tuple[str, str]:
        core_app = from_json(_loads(app_json))
        offer = _take_offer()
        app = core_app
        if offer is not None:
            # The caller's app (sharing its overrides) with the environment the core gave each role.
            app = _copy_app(offer.app)
            for role, core_role in zip(app.roles, core_app.roles):
                role.env = dict(core_role.env)
        s = self.scheduler
        # A Scheduler subclass's options are the ones the core resolved against; anything else (an
        # object with its own submit_dryrun, a test double) resolves as under TorchX's Runner.
        templated = isinstance(s, Scheduler) and not _overrides(s, "submit_dryrun")
        resolved = _loads(cfg_json) if templated else s.run_opts().resolve(_loads(cfg_json))
        s._pre_build_validate(app, scheduler, resolved)
        from torchx.workspace.api import WorkspaceMixin

        if isinstance(s, WorkspaceMixin):
            workspace = offer.workspace if offer is not None else None
            if workspace:
                app.roles[0].workspace = Workspace.from_str(workspace) if isinstance(workspace, str) else workspace
            s.build_workspaces(app.roles, resolved)
        s._validate(app, scheduler, resolved)
        info = _dryrun_resolved(s, app, resolved) if templated else s.submit_dryrun(app, resolved)
        info._scheduler = scheduler
        token = f"py-{next(self._tokens)}"
        self._pending[token] = info
        if offer is not None:
            offer.info = info
        return _printable(info), token

    def schedule(self, token: str) -> str:
        info = self._pending.pop(token, None)
        if info is None:
            raise ValueError("schedule: this request was not made by this scheduler's dry run, or was submitted already")
        app_id = str(self.scheduler.schedule(info))
        app = getattr(info, "_app", None)
        if isinstance(app, AppDef):
            self._submitted[app_id] = app
            while len(self._submitted) > self._KEEP_SUBMITTED:
                del self._submitted[next(iter(self._submitted))]
        return app_id

    def describe(self, app_id: str) -> str:
        """The app's status as JSON (with the AppDef as submitted, where it went through here);
        "null" when the object does not know it."""
        d = self.scheduler.describe(app_id)
        if d is None:
            self._submitted.pop(app_id, None)
            return "null"
        out: Dict[str, Any] = {
            "state": AppState(d.state).name,
            "num_restarts": max(0, d.num_restarts),
            "roles": [r.to_json() for r in d.roles_statuses],
            "msg": d.msg if d.msg != "<NONE>" else "",
            "structured_error_msg": d.structured_error_msg,
            "url": d.ui_url,
        }
        app = self._submitted.get(app_id)
        if app is not None:
            with _overrides_detached(app):  # described as submitted; what overrides produce is the object's
                out["app"] = to_json(app)
        return _dumps(out, default=int)

    def cancel(self, app_id: str) -> None:
        if _overrides(self.scheduler, "cancel"):
            self.scheduler.cancel(app_id)
        else:
            self.scheduler._cancel_existing(app_id)

    def delete(self, app_id: str) -> None:
        self.scheduler.delete(app_id)
        self._submitted.pop(app_id, None)

    def list(self) -> str:
        return _dumps(
            [{"app_id": a.app_id, "state": int(a.state), "name": getattr(a, "name", "")} for a in self.scheduler.list()]
        )

    def log_iter(
        self,
        app_id: str,
        role: str,
        k: int,
        regex: Optional[str],
        since: Optional[float],
        until: Optional[float],
        follow: bool,
        stream: Optional[str],
    ) -> Any:
        return self.scheduler.log_iter(
            app_id,
            role,
            k,
            regex,
            None if since is None else datetime.fromtimestamp(since),
            None if until is None else datetime.fromtimestamp(until),
            follow,
            streams=None if stream is None else Stream(stream),
        )

    # ---- the bridge's JSON protocol (src/plugins/json_scheduler.h) ----

    def json_call(self, method: str, arg: Optional[str]) -> str:
        """One call of the JSON scheduler protocol: text in, text out."""
        if method == "dryrun":
            req = _loads(arg or "{}")
            request, token = self.dryrun_app(_dumps(req["app"]), _dumps(req["cfg"]), self._name)
            return _dumps({"request": request, "payload": token})
        if method == "schedule":
            return self.schedule(arg or "")
        if method == "describe":
            return self.describe(arg or "")
        if method == "cancel":
            self.cancel(arg or "")
            return "ok"
        if method == "list":
            return self.list()
        if method == "logs":
            req = _loads(arg or "{}")
            lines = self.scheduler.log_iter(req["app_id"], req["role"], req["k"])
            return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
        raise ValueError(f"unknown scheduler call {method!r}")


def _printable(info: Any) -> str:
    # The request as the info prints it; its formatter may return a non-string (TorchX calls it
    # only when asked), then the request's own repr.
    try:
        return repr(info)
    except Exception:  # noqa: BLE001 - any formatter failure falls back to the request
        return repr(getattr(info, "request", None))


def adapter_maker(name: str, factory: Callable[..., Any], **params: Any) -> Callable[[str], SchedulerAdapter]:
    """``make(session_name)``: the adapter of a new scheduler object from ``factory``."""

    def make(session_name: str) -> SchedulerAdapter:
        return SchedulerAdapter(factory(session_name, **params), name)

    return make
