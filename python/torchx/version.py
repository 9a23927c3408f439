"""The TorchX API level this package implements (0.8: TorchX HEAD), and the image builtin
components default to."""

# Kept equal to pyproject.toml's and CMakeLists.txt's version (python/tests checks both), so that
# pins such as `torchx>=0.7.0` (NeMo-Run, Ax's extra) are satisfied by this package.
__version__: str = "0.8.0"


def __getattr__(name: str) -> str:
    # TorchX's TORCHX_IMAGE: computed when read, so that importing torchx.version stays free.
    if name == "TORCHX_IMAGE":
        from torchx._core import core

        return core().default_image()
    raise AttributeError(f"module 'torchx.version' has no attribute {name!r}")
