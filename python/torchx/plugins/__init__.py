"""torchx.plugins: plugin registration, discovery and diagnostics (TorchX's API).

Decorate factories with ``register`` in modules under the ``torchx_plugins`` namespace package
(e.g. ``torchx_plugins/schedulers/my_scheduler.py``); ``registry()`` discovers them lazily, per
plugin type, together with the core's built-ins and native (shared-library) plugins, and
``print(registry())`` reports what was found, from where, and what failed to load and why.
Entry points (``[torchx.schedulers]`` etc. in a package's metadata) are still read, deprecated,
unless ``TORCHX_NO_ENTRYPOINTS=1``.
"""

from torchx.plugins._registration import (
    EIGHTH,
    HALF,
    QUARTER,
    SIXTEENTH,
    WHOLE,
    halve_mem_down_to,
    powers_of_two_gpus,
    register,
    resource_tags,
)
from torchx.plugins._registry import PluginRegistry, PluginSource, PluginType, RegistrationError, registry

__all__ = [
    "EIGHTH",
    "HALF",
    "QUARTER",
    "SIXTEENTH",
    "WHOLE",
    "halve_mem_down_to",
    "powers_of_two_gpus",
    "resource_tags",
    "PluginRegistry",
    "PluginSource",
    "PluginType",
    "RegistrationError",
    "register",
    "registry",
]
