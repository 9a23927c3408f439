"""Access to the C++ extension, imported on first use so that ``import torchx`` stays cheap."""

from typing import Any

_module: Any = None


def core() -> Any:
    global _module
    if _module is None:
        from torchx import _torchx

        # Python plugins (torchx_plugins.*, entry points) join the core's registry, which asks
        # for each plugin type only when it is first needed.
        _torchx.set_python_provider(_provide)  # type: ignore[attr-defined]  # the extension has no stub
        _module = _torchx
    return _module


def backend_helper(scheduler: str, function: str, args: Any = None) -> Any:
    """A core back-end's pure helper (a request's script, a state table, manifest pieces): the
    only way Python reaches a back-end's code, so any back-end may be a loadable module."""
    import json

    return json.loads(core().backend_helper(scheduler, function, json.dumps(args if args is not None else {})))


# The provider the core calls for Python plugins, named by module: plugin discovery sits above
# everything the core's Python side needs, so this module (the bottom layer) never imports it.
_PROVIDER_MODULE = "torchx.plugins._registry"


def _provide(core_type: str) -> Any:
    import importlib

    return importlib.import_module(_PROVIDER_MODULE)._core_provider(core_type)
