"""String helpers."""

import re

_NOT_NAME_CHAR = re.compile(r"[^a-z0-9\-]")


def normalize_str(data: str) -> str:
    """Lower-cased ``data`` keeping only ``[a-z0-9-]``, without leading dashes: a name that
    Kubernetes (and most back-ends) accept."""
    return _NOT_NAME_CHAR.sub("", data.lower()).lstrip("-")
