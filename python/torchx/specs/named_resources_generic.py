"""Generic named resources (``gpu.small`` ... ``cpu.xlarge``): defaults for components and
examples, not tied to a cloud's instance types, with no capabilities or devices. Their sizes may
change; register your own for real hardware. The table is the core's."""

from typing import Callable, Mapping

from torchx.specs._builtin_resources import factories
from torchx.specs.api import Resource

GiB: int = 1024

NAMED_RESOURCES: Mapping[str, Callable[[], Resource]] = {
    **factories("gpu."),
    **factories("cpu."),
}
