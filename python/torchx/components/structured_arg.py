"""Component arguments that pack several values (TorchX's torchx.components.structured_arg):
``--name EXPERIMENT/RUN`` and ``-j NNODESxNPROC``. The rules are the core's, the same dist.spmd
applies on the command line."""

import warnings
from dataclasses import dataclass
from typing import Optional

from torchx import specs


def _core():  # type: ignore[no-untyped-def]
    from torchx._core import core

    return core()


def _without_flag(e: ValueError) -> ValueError:
    # The core names the CLI flag ("--name: ..."); here the caller passed a Python argument.
    text = str(e)
    for flag in ("--name: ", "-j: ", "-h: "):
        if text.startswith(flag):
            return ValueError(text[len(flag):])
    return e


@dataclass
class StructuredNameArgument:
    experiment_name: str
    run_name: str

    def __str__(self) -> str:
        return f"{self.experiment_name or ''}/{self.run_name}"

    @staticmethod
    def parse_from(
        name: str,
        m: Optional[str] = None,
        script: Optional[str] = None,
        default_experiment_name: str = "default-experiment",
    ) -> "StructuredNameArgument":
        """``exp/run``, ``exp/``, ``/run``, ``run`` or ``/``: a missing run name comes from the
        module's last part or the script's stem; exactly one of ``m`` and ``script`` must be given
        (ValueError otherwise)."""
        try:
            experiment, run = _core().parse_structured_name(name, m or "", script or "")
        except ValueError as e:
            raise _without_flag(e) from None
        # The core's default experiment name is TorchX's; a caller may choose another.
        has_experiment = "/" in name and not name.startswith("/")
        return StructuredNameArgument(experiment if has_experiment else default_experiment_name, run)


@dataclass
class StructuredJArgument:
    nnodes: int
    nproc_per_node: int

    def __str__(self) -> str:
        return f"{self.nnodes}x{self.nproc_per_node}"

    @staticmethod
    def parse_from(h: str, j: str) -> "StructuredJArgument":
        """``-j N`` on host type ``h`` is N nodes x (the host's GPUs), an error on a host without
        GPUs; ``-j NxM`` is taken as given, with a warning when M differs from the host's GPUs."""
        try:
            nnodes, nproc = (int(x) for x in _core().parse_spmd_j(h, j).split("x"))
        except ValueError as e:
            raise _without_flag(e) from None
        num_gpus = specs.named_resources[h].gpu
        if "x" in j and nproc != num_gpus:
            warnings.warn(
                f"In `-j {j}` you specified nproc_per_node={nproc} which does not equal the number of GPUs on a"
                f" {h}: {num_gpus}. This may lead to under-utilization or an error. If this was intentional,"
                f" ignore this warning. Otherwise set `-j {nnodes}` to auto-set nproc_per_node to the number of"
                " GPUs on the host."
            )
        return StructuredJArgument(nnodes=nnodes, nproc_per_node=nproc)
