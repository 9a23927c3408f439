"""Python entry points (``[project.entry-points.<group>]``), loaded on demand."""

from importlib import metadata
from typing import Any, Callable, Dict

_NO_DEFAULT: Any = object()


def load(group: str, name: str, default: Any = _NO_DEFAULT) -> Any:
    """The object entry point ``name`` of ``group`` names (a module or ``module:attr``);
    ``default`` when there is none, or KeyError if no default was given."""
    eps = metadata.entry_points().select(group=group, name=name)
    for ep in eps:
        return ep.load()
    if default is _NO_DEFAULT:
        raise KeyError(f"entrypoint {group}.{name} not found")
    return default


def _deferred(ep: metadata.EntryPoint) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        target = ep.load()
        # A module entry point is returned as is; a function is called with the arguments.
        return target if ep.attr is None else target(*args, **kwargs)

    return call


def load_group(group: str) -> Dict[str, Callable[..., Any]]:
    """``name -> fn`` for every entry point of ``group`` ({} if none); nothing is imported until
    a ``fn`` is called: then a function entry point is called with fn's arguments, and a module
    entry point returns the module."""
    return {ep.name: _deferred(ep) for ep in metadata.entry_points().select(group=group)}
