"""torchx: a universal job launcher for PyTorch, with a C++ core.

Importing this package loads nothing else: torchx.specs, torchx.runner and the extension module
are imported when used.
"""

from torchx.version import __version__ as __version__


def __getattr__(name: str) -> str:
    # TorchX's torchx.IMAGE: the default image of builtin components ($TORCHX_IMAGE overrides).
    if name == "IMAGE":
        from torchx._core import core

        return core().default_image()
    raise AttributeError(f"module 'torchx' has no attribute {name!r}")
