"""Where events go: a logging handler per destination name ("null" drops them, "console" prints
them). Tools add their own (e.g. a telemetry sink) to ``_log_handlers``."""

import logging
from typing import Dict

_log_handlers: Dict[str, logging.Handler] = {
    "console": logging.StreamHandler(),
    "null": logging.NullHandler(),
}


def get_logging_handler(destination: str = "null") -> logging.Handler:
    return _log_handlers[destination]
