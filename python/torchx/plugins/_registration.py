"""The ``register`` decorator and the fractional helpers.

A named resource's fractional variants are named and expanded by the core (the same code as for
native plugins, include/torchx/plugins/fractionals.h): the helpers below carry a request the
core understands (``_fractionals_request``) and, called directly, ask the core for the table."""

import inspect
import json
from typing import Any, Callable, Dict, List, Optional, TypeVar, Union

from torchx.plugins._types import PluginType
from torchx.specs.api import resource_tags  # noqa: F401  (re-exported: TorchX has it here)

WHOLE: float = 1.0
HALF: float = 0.5
QUARTER: float = 0.25
EIGHTH: float = 0.125
SIXTEENTH: float = 0.0625



F = TypeVar("F", bound=Callable[..., Any])
Fractionals = Union[Callable[..., Dict[float, str]], Dict[float, str]]


def _resource_json(resource: Any) -> str:
    from torchx.specs.api import resource_to_json

    return json.dumps(resource_to_json(resource))


def _fractionals_of(request: Dict[str, Any], resource: Any) -> Dict[float, str]:
    from torchx._core import core

    return dict(core().fractionals(json.dumps(request), _resource_json(resource)))


def powers_of_two_gpus(resource: Any) -> Dict[float, str]:
    """``{1.0: "8", 0.5: "4", 0.25: "2", 0.125: "1"}`` for an 8-GPU resource (ValueError when
    gpu is 0 or not a power of two)."""
    return _fractionals_of(powers_of_two_gpus._fractionals_request, resource)  # type: ignore[attr-defined]


powers_of_two_gpus._fractionals_request = {"policy": "powers_of_two_gpus"}  # type: ignore[attr-defined]


def halve_mem_down_to(*, minGiB: int) -> Callable[..., Dict[float, str]]:
    """A fractionals callable halving the memory in GiB down to ``minGiB`` (ValueError when
    memMB is 0 or not whole GiB, or minGiB is below the odd part of the GiB count)."""
    request = {"policy": "halve_mem_down_to", "min_gib": int(minGiB)}

    def fractionals(resource: Any) -> Dict[float, str]:
        return _fractionals_of(request, resource)

    fractionals._fractionals_request = request  # type: ignore[attr-defined]
    return fractionals


class register:
    """Tags a function as a TorchX plugin (``_plugin_type``, ``_plugin_name``); the registry
    collects tagged functions from every module under ``torchx_plugins``."""

    def __init__(self, type: PluginType, name: Optional[str] = None) -> None:
        self.type = PluginType(type)
        self.name = name

    def __call__(self, fn: F) -> F:
        fn._plugin_type = self.type  # type: ignore[attr-defined]
        fn._plugin_name = self.name or fn.__name__  # type: ignore[attr-defined]
        return fn

    @classmethod
    def scheduler(cls, name: Optional[str] = None) -> "register":
        """A scheduler factory ``(session_name: str, **kwargs) -> Scheduler``."""
        return cls(PluginType.SCHEDULER, name)

    @classmethod
    def tracker(cls, name: Optional[str] = None) -> "register":
        return cls(PluginType.TRACKER, name)

    @classmethod
    def named_resource(
        cls,
        name: Optional[str] = None,
        aliases: Optional[List[str]] = None,
        fractionals: Optional[Fractionals] = None,
    ) -> "_register_named_resource":
        """A named resource factory ``() -> Resource``; with ``fractionals`` it must take
        ``fractional: float`` and every ``{fraction: suffix}`` entry registers ``<name>_<suffix>``."""
        return _register_named_resource(name, aliases, fractionals)

    # Also reachable as register.powers_of_two_gpus / register.halve_mem_down_to (seed 000's spelling).
    powers_of_two_gpus = staticmethod(powers_of_two_gpus)
    halve_mem_down_to = staticmethod(halve_mem_down_to)


class _register_named_resource(register):
    def __init__(self, name: Optional[str], aliases: Optional[List[str]], fractionals: Optional[Fractionals]) -> None:
        super().__init__(PluginType.NAMED_RESOURCE, name)
        self.aliases = list(aliases or [])
        self.fractionals = fractionals

    def __call__(self, fn: F) -> F:
        if self.fractionals is not None and "fractional" not in inspect.signature(fn).parameters:
            raise ValueError(
                f"named resource {self.name or fn.__name__}: fractionals need the function to take "
                "`fractional: float`"
            )
        super().__call__(fn)
        fn._plugin_aliases = self.aliases  # type: ignore[attr-defined]
        fn._plugin_fractionals = self.fractionals  # type: ignore[attr-defined]
        return fn
