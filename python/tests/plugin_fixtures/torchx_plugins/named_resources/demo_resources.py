"""Named resource plugins for the tests: a 4-GPU host with power-of-two fractionals and an alias,
and a 64 GiB host halved down to 16 GiB."""

from torchx.plugins import WHOLE, register
from torchx.specs import Resource


@register.named_resource(aliases=["dgpu"], fractionals=register.powers_of_two_gpus)
def demo_gpu(fractional: float = WHOLE) -> Resource:
    return Resource(cpu=int(32 * fractional), gpu=int(4 * fractional), memMB=int(256 * 1024 * fractional))


@register.named_resource(name="demo_mem", fractionals=register.halve_mem_down_to(minGiB=16))
def demo_mem_factory(fractional: float = WHOLE) -> Resource:
    return Resource(cpu=16, gpu=0, memMB=int(64 * 1024 * fractional))


@register.tracker()
def demo_tracker() -> dict:
    return {"kind": "demo"}
