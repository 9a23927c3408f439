"""Distributed training: ``ddp`` (torchrun-launched data parallel) and ``spmd``."""

from torchx.components._builtin import builtin

ddp = builtin("dist.ddp", __name__)
spmd = builtin("dist.spmd", __name__)


def parse_nnodes(j: str) -> "tuple[int, int, int, str]":
    """``-j`` of dist.ddp -> (min_nnodes, max_nnodes, nproc_per_node, nnodes for torchrun):
    ``2:4x8`` elastic, ``2x8``, or ``8`` (one node). ValueError naming the accepted forms."""
    from torchx._core import core

    return core().parse_nnodes(j)
