"""Access to the C++ extension, imported on first use so that ``import torchx`` stays cheap."""

from typing import Any

_module: Any = None


def core() -> Any:
    global _module
    if _module is None:
        from torchx import _torchx

        _module = _torchx
    return _module
