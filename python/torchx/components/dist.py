"""Distributed training: ``torchrun`` (torchrun-launched PyTorch apps), and ``ddp`` and ``spmd``,
TorchX's deprecated aliases of it (each call warns)."""

import shlex
from typing import Iterable

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


# TorchX's private helpers that tools building their own torchrun components import (NeMo-Run's
# torchrun component and its fault-tolerance templates): kept as compatibility shims, not used by
# the built-in components, which the core renders.
class _noquote(str):
    """An argument ``_args_join`` passes through unquoted (a shell expansion such as the
    rendezvous endpoint ``$${TORCHX_RANK0_HOST:=localhost}:29500``)."""


def _args_join(args: Iterable[str]) -> str:
    """``shlex.join``, except that ``_noquote`` arguments are left as they are."""
    return " ".join(a if isinstance(a, _noquote) else shlex.quote(a) for a in args)
