"""Distributed training: ``ddp`` (torchrun-launched data parallel) and ``spmd``."""

from torchx.components._builtin import builtin

ddp = builtin("dist.ddp", __name__)
spmd = builtin("dist.spmd", __name__)
