"""torchx.specs: the job model (AppDef, Role, Resource, ...) and named resources.

Same names as TorchX's torchx.specs, so component files written for TorchX import them unchanged.
"""

import contextlib
import os
import sys
from typing import Any, Callable, Dict, Iterator, Optional

from torchx._core import core
from torchx.specs.api import (
    ALL,
    MISSING,
    NONE,
    NULL_RESOURCE,
    TORCHX_HOME,
    UNKNOWN,
    AppDef,
    AppDryRunInfo,
    AppHandle,
    AppState,
    AppStatus,
    AppStatusError,
    BindMount,
    CfgVal,
    DeviceMount,
    InvalidRunConfigException,
    MalformedAppHandleException,
    MountType,
    ParsedAppHandle,
    ReplicaState,
    ReplicaStatus,
    Resource,
    RetryPolicy,
    Role,
    RoleStatus,
    UnknownAppException,
    UnknownSchedulerException,
    VolumeMount,
    Workspace,
    get_type_name,
    is_started,
    is_terminal,
    macros,
    make_app_handle,
    parse_app_handle,
    resource_from_json,
    runopt,
    runopts,
)
from torchx.specs.builders import parse_mounts

# Loaded on first use (module __getattr__ below): importing torchx.specs stays cheap.
_LAZY = {
    "CapabilityKey": "torchx.specs.capabilities",
    "NA": "torchx.specs.metadata_keys",
    "TORCHX_CONTEXT_NAME": "torchx.specs.metadata_keys",
    "app_metadata": "torchx.specs.metadata_keys",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'torchx.specs' has no attribute {name!r}")

GiB: int = 1024

ResourceFactory = Callable[[], Resource]


class _NamedResourcesLibrary:
    """``named_resources["gpu.small"]``: a fresh Resource per lookup; a KeyError with "did you
    mean" for unknown names. Lookups are answered by the core's table (plus plugins)."""

    @staticmethod
    @contextlib.contextmanager
    def _lookup(key: object) -> Iterator[None]:
        # A plugin module that looks a named resource up as it is imported would read a table
        # that its own discovery is still filling: refused, and its import recorded as failed.
        # Discovery runs in torchx.plugins._registry; while it was never imported, none runs (the
        # specs sit below the plugins and do not import them).
        discovery = sys.modules.get("torchx.plugins._registry")
        if discovery is not None and discovery.importing_plugins():
            raise RuntimeError(
                f"re-entrant named-resource lookup of {key!r}: a plugin module looked a named resource up "
                "while plugins were being discovered (at its import); look it up inside the factory instead")
        yield

    @staticmethod
    def _custom() -> Dict[str, Any]:
        """TorchX's ``TORCHX_CUSTOM_NAMED_RESOURCES``: a module whose ``NAMED_RESOURCES`` maps names
        to Resource factories, imported at each lookup (so ``sys.modules`` is honoured); a module
        that does not import is an error naming the variable."""
        module_name = os.environ.get("TORCHX_CUSTOM_NAMED_RESOURCES")
        if not module_name:
            return {}
        import importlib

        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            raise ModuleNotFoundError(
                f"TORCHX_CUSTOM_NAMED_RESOURCES={module_name}: the module does not import ({e})") from e
        return dict(getattr(module, "NAMED_RESOURCES", {}) or {})

    def __getitem__(self, key: str) -> Resource:
        with self._lookup(key):
            if key in ("NULL", "MISSING"):
                return Resource(cpu=-1, gpu=-1, memMB=-1)
            custom = self._custom()
            if key in custom:
                return custom[key]()
            import json

            return resource_from_json(json.loads(core().named_resource(key)))

    def __contains__(self, key: object) -> bool:
        with self._lookup(key):
            return isinstance(key, str) and (
                key in ("NULL", "MISSING") or key in self._custom() or key in core().named_resource_names())

    def __iter__(self) -> Iterator[str]:
        """The registered names: the core's table, every plugin's and TORCHX_CUSTOM_NAMED_RESOURCES's."""
        with self._lookup("*"):
            names = list(core().named_resource_names())
            return iter(names + [n for n in self._custom() if n not in names])

    def reset(self) -> None:
        """Forgets the plugins' named resources: the next lookup discovers them again (nothing to
        forget while plugin discovery was never imported)."""
        discovery = sys.modules.get("torchx.plugins._registry")
        if discovery is not None:
            discovery._cache_clear()


named_resources: _NamedResourcesLibrary = _NamedResourcesLibrary()


def get_named_resources(res: str) -> Resource:
    """The Resource registered under ``res`` (KeyError if none)."""
    return named_resources[res]


def resource(
    cpu: Optional[int] = None,
    gpu: Optional[int] = None,
    memMB: Optional[int] = None,
    h: Optional[str] = None,
) -> Resource:
    """A Resource from a named resource ``h`` or from cpu/gpu/memMB (defaults 2 CPUs, 0 GPUs,
    1024 MB, as TorchX); ``h`` wins when both are given."""
    if h:
        return get_named_resources(h)
    return Resource(cpu=cpu or 2, gpu=gpu or 0, memMB=memMB or 1024)


__all__ = [
    "ALL", "MISSING", "NA", "NONE", "NULL_RESOURCE", "GiB", "TORCHX_CONTEXT_NAME", "TORCHX_HOME", "UNKNOWN",
    "CapabilityKey", "Workspace", "app_metadata", "AppDef", "AppDryRunInfo", "AppHandle", "AppState",
    "AppStatus", "AppStatusError", "BindMount", "CfgVal", "DeviceMount", "InvalidRunConfigException",
    "MalformedAppHandleException", "MountType", "ParsedAppHandle", "ReplicaState", "ReplicaStatus", "Resource",
    "RetryPolicy", "Role", "RoleStatus", "UnknownAppException", "UnknownSchedulerException", "VolumeMount",
    "get_named_resources", "get_type_name", "is_started", "is_terminal", "macros", "make_app_handle",
    "named_resources", "parse_app_handle", "parse_mounts", "resource", "runopt", "runopts",
]
