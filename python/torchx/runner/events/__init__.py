"""Runner events (TorchX's torchx.runner.events): every Runner API call is recorded as a
``TorchxEvent`` on a logger per destination (``record``), timed and with its exception by
``log_event``. The default destination ("null") drops them; tools patch ``record`` or add a
handler to collect them."""

import json
import threading
import time
from types import TracebackType
from typing import Any, Dict, Optional, Type

from torchx.runner.events.api import SourceType, TorchxEvent
from torchx.util.session import get_session_id_or_create_new

__all__ = ["SourceType", "TorchxEvent", "log_event", "record"]

# logging (and traceback) load on the first recorded event, not with torchx.runner: every Runner
# call records one, but importing the runner should stay cheap.
_loggers: Dict[str, Any] = {}
_loggers_lock = threading.Lock()


def _logger(destination: str) -> Any:
    import logging

    from torchx.runner.events.handlers import get_logging_handler

    with _loggers_lock:
        logger = _loggers.get(destination)
        if logger is None:
            handler = get_logging_handler(destination)
            handler.setLevel(logging.DEBUG)
            logger = logging.getLogger(f"torchx-events-{destination}")
            logger.propagate = False  # an event is handled once, not again by the root logger
            logger.addHandler(handler)
            _loggers[destination] = logger
        return logger


def record(event: TorchxEvent, destination: str = "null") -> None:
    """Logs ``event`` (as JSON) to ``destination``'s logger; an event that cannot be serialized
    is reported and dropped. Nothing is serialized for a logger that would drop it (the default
    destination's, whose only handler is a NullHandler)."""
    logger = _logger(destination)
    if not _emits(logger):
        return
    try:
        text = event.serialize()
    except Exception:  # noqa: BLE001 - recording must never fail the call it records
        import logging

        logging.getLogger(__name__).exception("failed to serialize event, will not record event")
        return
    logger.info(text)


def _emits(logger: Any) -> bool:
    import logging

    if not logger.isEnabledFor(logging.INFO):
        return False
    return any(not isinstance(h, logging.NullHandler) for h in logger.handlers) or logger.propagate


class log_event:
    """``with log_event("run", scheduler, app_id): ...`` records one event when the block ends,
    with its CPU and wall time and the exception that left it, if any."""

    def __init__(
        self,
        api: str,
        scheduler: Optional[str] = None,
        app_id: Optional[str] = None,
        app_image: Optional[str] = None,
        app_metadata: Optional[Dict[str, str]] = None,
        runcfg: Optional[str] = None,
        workspace: Optional[str] = None,
    ) -> None:
        self._torchx_event = TorchxEvent(
            session=get_session_id_or_create_new(),
            scheduler=scheduler or "",
            api=api,
            app_id=app_id,
            app_image=app_image,
            app_metadata=app_metadata,
            runcfg=runcfg,
            source=SourceType.UNKNOWN,
            workspace=workspace,
        )
        self._cpu_ns = 0
        self._wall_ns = 0

    def __enter__(self) -> "log_event":
        self._cpu_ns = time.process_time_ns()
        self._wall_ns = time.perf_counter_ns()
        self._torchx_event.start_epoch_time_usec = int(time.time() * 1_000_000)
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        event = self._torchx_event
        event.cpu_time_usec = (time.process_time_ns() - self._cpu_ns) // 1000
        event.wall_time_usec = (time.perf_counter_ns() - self._wall_ns) // 1000
        if tb is not None:
            import traceback

            event.raw_exception = "".join(traceback.format_exception(exc_type, exc, tb))
            last = traceback.extract_tb(tb)[-1]
            event.exception_source_location = json.dumps(
                {"filename": last.filename, "lineno": last.lineno, "name": last.name}
            )
        if exc_type is not None:
            event.exception_type = exc_type.__name__
        if exc is not None:
            event.exception_message = str(exc)
        record(event)


