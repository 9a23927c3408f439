"""Metadata keys and values schedulers stamp into submitted jobs. The spellings are a contract
with the tools that read jobs back: import them rather than re-spelling them."""

TORCHX_CONTEXT_NAME: str = "TORCHX_CONTEXT_NAME"

# The value written where a key applies but nothing is known.
NA: str = "<<NA>>"


class app_metadata:
    """App-level metadata keys."""

    CONTEXT: str = "torchx/context"
    VERSION: str = "torchx/version"
    SCHEDULER: str = "torchx/scheduler"
    # Per-role keys are `torchx/roles.<role>.<key>`: role names cannot hold '.' or '/', so the
    # first '.' after the prefix ends the role name.
    ROLES_PREFIX: str = "torchx/roles."
