"""The id of this launcher session: one per process, shared with children through the
environment (``TORCHX_INTERNAL_SESSION_ID``) so that a job's events and its launcher's agree."""

import os
from typing import Optional

from torchx import settings

TORCHX_INTERNAL_SESSION_ID: str = settings.ENV_TORCHX_INTERNAL_SESSION_ID

# Read by TorchX's own tests and tools; None until the first get_session_id_or_create_new().
CURRENT_SESSION_ID: Optional[str] = None


def get_session_id_or_create_new() -> str:
    """This process's session id: the inherited one if the environment has it, else a new uuid4."""
    global CURRENT_SESSION_ID
    if not CURRENT_SESSION_ID:
        import uuid  # here: only the first call needs it

        CURRENT_SESSION_ID = os.environ.get(settings.ENV_TORCHX_INTERNAL_SESSION_ID) or str(uuid.uuid4())
    return CURRENT_SESSION_ID


def get_torchx_session_id() -> Optional[str]:
    """The session id if one was made in this process, else None (never creates one)."""
    return CURRENT_SESSION_ID
