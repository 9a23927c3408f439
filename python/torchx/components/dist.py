"""Distributed training: ``torchrun`` (torchrun-launched PyTorch apps), and ``ddp`` and ``spmd``,
TorchX's deprecated aliases of it (each call warns)."""

from torchx.components._builtin import builtin

torchrun = builtin("dist.torchrun", __name__)
ddp = builtin("dist.ddp", __name__)
spmd = builtin("dist.spmd", __name__)


def __getattr__(name: str) -> "dict[str, str]":
    # TorchX's table of what `ddp(debug=True)` sets (the core's), read on first use.
    if name == "_TORCH_DEBUG_FLAGS":
        from torchx._core import core

        return dict(core().torch_debug_flags())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def parse_nnodes(j: str) -> "tuple[int, int, int, str]":
    """``-j`` of dist.ddp -> (min_nnodes, max_nnodes, nproc_per_node, nnodes for torchrun):
    ``2:4x8`` elastic, ``2x8``, or ``8`` (one node). ValueError naming the accepted forms."""
    from torchx._core import core

    return core().parse_nnodes(j)
