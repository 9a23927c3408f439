"""The exceptions TorchX users catch, with TorchX's names and bases.

The extension raises these (python/ext/errors.cc maps core status codes to them); this module
is their single definition, re-exported by torchx.specs and torchx.specs.finder.
"""

from typing import Any, Optional


class MalformedAppHandleException(Exception):
    """An app handle that is not ``{scheduler}://{session_name}/{app_id}``."""


class InvalidRunConfigException(ValueError):
    """A scheduler cfg that does not match the scheduler's runopts (missing or mistyped), or a
    ``-cfg`` string that cannot be parsed. A ValueError too: TorchX raises ValueError for a
    malformed cfg string and this exception for a bad value, and callers catch either."""

    def __init__(self, invalid_reason: str, cfg: Optional[Any] = None, runopts: Optional[Any] = None) -> None:
        super().__init__(invalid_reason)
        self.cfg = cfg
        self.runopts = runopts


class UnknownSchedulerException(KeyError):
    """No scheduler by that name (TorchX's; a KeyError too, as the core's lookups raised before).
    The core's message lists the valid choices."""

    def __init__(self, scheduler_backend: str, message: Optional[str] = None) -> None:
        super().__init__(message or f"Scheduler backend: {scheduler_backend} does not exist.")
        self.scheduler_backend = scheduler_backend

    def __str__(self) -> str:  # the message, not KeyError's quoted repr
        return str(self.args[0])


class UnknownAppException(KeyError):
    """Raised by schedulers that are asked about an app they do not know (TorchX's; a KeyError
    too, as the core's lookups raised before)."""

    def __init__(self, app_handle: str) -> None:
        super().__init__(f"Unknown app = {app_handle}. Did you forget to call session.run()?")

    def __str__(self) -> str:  # the message, not KeyError's quoted repr
        return str(self.args[0])


class ComponentNotFoundException(Exception):
    """No component by that name (builtin, file or module)."""


class ComponentValidationException(Exception):
    """A component function that breaks TorchX's component rules (the linter's errors)."""


class AppStatusError(Exception):
    """Raised by AppStatus.raise_for_status() for a failed app."""

    def __init__(self, status: Any, *args: object) -> None:
        super().__init__(*args)
        self.status = status
