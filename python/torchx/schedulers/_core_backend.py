"""What TorchX's scheduler classes that stand on one of the core's back-ends share: a core
Runner for this session, the app handle of an id, and describe / list / logs / cancel by id
(the core's, so apps are the same ones the CLI and other processes see)."""

from datetime import datetime
import json
from typing import Any, Dict, Iterable, List, Optional

from torchx._core import core
from torchx.schedulers.api import DescribeAppResponse, ListAppResponse, Stream
from torchx.specs.api import AppDryRunInfo, AppState, AppStatus, app_to_core, status_from_core


class CoreBackend:
    """Mixin for a ``Scheduler`` whose ``backend`` is a core back-end's name: put it first among
    the bases so that its describe / list / log_iter / _cancel_existing are the Scheduler's."""

    backend: str
    session_name: str
    _runner_obj: Any = None

    def _runner(self) -> Any:
        if self._runner_obj is None:
            self._runner_obj = core().Runner(self.session_name or "torchx", None)
        return self._runner_obj

    def _handle(self, app_id: str) -> str:
        return f"{self.backend}://{self.session_name}/{app_id}"

    def _status(self, app_id: str) -> Optional[AppStatus]:
        return status_from_core(self._runner().status(self._handle(app_id)))

    def _describe_core(self, app_id: str, ui_url: Optional[str] = None) -> Optional[DescribeAppResponse]:
        status = self._status(app_id)
        if status is None:
            return None
        return DescribeAppResponse(
            app_id=app_id,
            state=status.state,
            num_restarts=status.num_restarts,
            msg=status.msg,
            structured_error_msg=status.structured_error_msg,
            ui_url=status.ui_url or ui_url,
            roles_statuses=status.roles,
        )

    def describe_native(self, app_id: str) -> Optional[AppDryRunInfo]:
        """The request as the engine now holds it (the core's Runner.describe_native), with the
        class's own request type where it has one (``_request_from_native``)."""
        info = self._runner().describe_native(self._handle(app_id))
        if info is None:
            return None
        out: AppDryRunInfo = AppDryRunInfo(self._request_from_native(json.loads(info.payload)), lambda _: info.request)
        out._scheduler = self.backend
        out._core = info
        return out

    def _request_from_native(self, payload: Dict[str, Any]) -> Any:
        """The back-end's structured request as this class's request object (default: the dict)."""
        return payload

    def _list_core(self) -> List[ListAppResponse]:
        return [
            ListAppResponse(app_id, AppState(state), handle, name)
            for app_id, state, handle, name in self._runner().list(self.backend)
        ]

    def _log_lines_core(
        self,
        app_id: str,
        role_name: str,
        k: int,
        regex: Optional[str],
        since: Optional[datetime],
        until: Optional[datetime],
        should_tail: bool,
        streams: Optional[Stream],
    ) -> Iterable[str]:
        stream = getattr(streams, "value", streams) or "combined"
        epoch = lambda t: None if t is None else float(t.timestamp())  # noqa: E731
        return self._runner().log_lines(
            self._handle(app_id), role_name, k, regex, epoch(since), epoch(until), bool(should_tail), str(stream)
        )

    def _dryrun_payload(self, app: Any, cfg: Any) -> str:
        """The back-end's own request for ``app`` (JSON), as its dry run builds it."""
        return self._runner().backend_dryrun(self.backend, app_to_core(app), dict(cfg)).payload

    def _schedule_core(self, dryrun_info: Any, payload: str, app_id: str = "") -> str:
        """Submits ``payload`` (the back-end's structured request, as edited) through the core;
        returns the app id. ``app_id``: the id the request already names, where the back-end keeps it."""
        app = dryrun_info._app
        app_json = app_to_core(app) if app is not None else '{"name": "app", "roles": []}'
        handle = self._runner().schedule_request(self.backend, app_json, app_id, payload)
        return handle.rsplit("/", 1)[-1]

    def _cancel_core(self, app_id: str) -> None:
        self._runner().cancel(self._handle(app_id))

    def _delete_core(self, app_id: str) -> None:
        self._runner().delete(self._handle(app_id))

    # TorchX's Scheduler methods, answered by the core.

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        return self._describe_core(app_id)

    def list(self, cfg: Optional[Any] = None) -> List[ListAppResponse]:
        return self._list_core()

    def log_iter(
        self,
        app_id: str,
        role_name: str,
        k: int = 0,
        regex: Optional[str] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
        should_tail: bool = False,
        streams: Optional[Stream] = None,
    ) -> Iterable[str]:
        return self._log_lines_core(app_id, role_name, k, regex, since, until, should_tail, streams)

    def _cancel_existing(self, app_id: str) -> None:
        self._cancel_core(app_id)
