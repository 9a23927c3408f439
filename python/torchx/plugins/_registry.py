"""PluginRegistry: Python discovery (torchx_plugins.* namespace modules, entry points) merged
with the core's registry (built-ins and native plugins).

Python plugins are also handed to the core (``_core_provider``), so that the Runner, named
resource lookups and the report see one registry; the core asks for each type once, on its
first use.
"""

import dataclasses
import enum
import functools
import importlib
import json
import logging
import os
import threading
import traceback
import warnings
from typing import Any, Callable, Dict, List, Optional, Tuple, cast, overload

from torchx.plugins._types import CORE_NAMES, PluginType

logger: logging.Logger = logging.getLogger(__name__)

Factory = Callable[..., Any]
# name -> (factory, source)
Found = Dict[str, Tuple[Factory, str]]

_importing = threading.local()  # per thread: plugin modules being imported by discovery


def importing_plugins() -> bool:
    """Whether this thread is importing plugin modules for discovery (torchx.specs refuses a
    named-resource lookup then: the table is still being filled)."""
    return getattr(_importing, "depth", 0) > 0


class PluginSource(enum.IntFlag):
    """Where Python plugins are discovered (TORCHX_PLUGINS_SOURCE is its integer value)."""

    NONE = 0
    NAMESPACE_PKG = 1  # modules under the torchx_plugins.* namespace package
    ENTRYPOINT = 2     # [torchx.schedulers] etc. entry points (deprecated)


@dataclasses.dataclass(frozen=True)
class RegistrationError:
    """A plugin that could not be registered: a module that failed to import (``module`` and
    ``error`` only), or a plugin refused (a duplicate name; ``name`` and ``plugin_type`` too)."""

    module: str
    error: str
    name: Optional[str] = None
    plugin_type: Optional[str] = None


class PluginRegistry:
    """Immutable from the outside, lazily populated: each plugin type is discovered on its first
    ``get()`` and cached. ``get`` never returns None; ``info`` returns copies."""

    def __init__(self, *, plugin_sources: Optional[PluginSource] = None, load_entrypoints: bool = True) -> None:
        if plugin_sources is None:
            plugin_sources = PluginSource.NAMESPACE_PKG | (PluginSource.ENTRYPOINT if load_entrypoints
                                                          else PluginSource.NONE)
        self._sources = PluginSource(plugin_sources)
        self._lock = threading.RLock()
        self._python: Dict[PluginType, Found] = {}
        self._errors: List[Tuple[str, str, str]] = []  # (source, kind, message), not yet given to the core
        self._recorded: List[RegistrationError] = []   # every one, for errors / load_errors()
        self._modules: Optional[List[Any]] = None

    # ---- public API ----

    def get(self, plugin_type: PluginType) -> Dict[str, Factory]:
        """name -> factory for ``plugin_type``: Python plugins first, then the core's (built-in and
        native) ones. Empty when nothing is found."""
        plugin_type = PluginType(plugin_type)
        found = {name: f for name, (f, _) in self._discover(plugin_type).items()}
        for name, source in self._core_info(plugin_type):
            if name not in found and not source.startswith(("python:", "entrypoint:")):
                found[name] = _core_factory(plugin_type, name)
        return found

    @overload
    def info(self) -> Dict[PluginType, Dict[str, Factory]]: ...

    @overload
    def info(self, plugin_type: PluginType) -> Dict[str, Factory]: ...

    def info(self, plugin_type: Optional[PluginType] = None) -> Any:
        """A copy of one type's plugins, or of every type's (discovering them all)."""
        if plugin_type is not None:
            return dict(self.get(plugin_type))
        return {t: dict(self.get(t)) for t in PluginType}

    @property
    def errors(self) -> List[RegistrationError]:
        """The errors of the discovery that has run so far (types never asked for add none)."""
        with self._lock:
            return list(self._recorded)

    def load_errors(self, plugin_type: Optional[PluginType] = None) -> List[RegistrationError]:
        """Discovers ``plugin_type`` (every type when None), then returns its errors: the modules
        under its ``torchx_plugins.<group>`` namespace that failed to import, and its refused
        plugins."""
        types = [PluginType(plugin_type)] if plugin_type is not None else list(PluginType)
        for t in types:
            self.get(t)
        if plugin_type is None:
            return self.errors
        namespace = _namespace_of(types[0])
        return [e for e in self.errors if e.plugin_type == types[0].name.lower()
                or e.module == namespace or e.module.startswith(namespace + ".")]

    def clear(self) -> None:
        """Forgets what was discovered (plugins and errors, here and in the core) and the cached
        ``registry()``: the next use discovers again, e.g. after sys.path changed."""
        with self._lock:
            self._python.clear()
            self._errors.clear()
            self._recorded.clear()
            self._modules = None
        _cache_clear()

    def __str__(self) -> str:
        """The diagnostic report: what was found, from where, what failed and why, time spent."""
        self._sync_core()
        from torchx._core import core

        return core().plugins_report()

    def report_json(self) -> str:
        self._sync_core()
        from torchx._core import core

        return core().plugins_report_json()

    __repr__ = __str__

    # ---- discovery ----

    def _discover(self, plugin_type: PluginType) -> Found:
        with self._lock:
            if plugin_type not in self._python:
                found: Found = {}
                for fn, module in self._tagged(plugin_type):
                    self._add(found, plugin_type, fn, f"python:{module}")
                if self._sources & PluginSource.ENTRYPOINT and os.environ.get("TORCHX_NO_ENTRYPOINTS") != "1":
                    for name, fn, dist in self._entry_points(plugin_type):
                        if name in found:
                            self._error(f"entrypoint:{dist}", "duplicate",
                                        f"{name} is already registered by {found[name][1]}", name, plugin_type)
                        else:
                            found[name] = (fn, f"entrypoint:{dist}")
                self._python[plugin_type] = found
            return self._python[plugin_type]

    def _namespace_modules(self) -> List[Any]:
        if self._modules is None:
            self._modules = []
            if not self._sources & PluginSource.NAMESPACE_PKG:
                return self._modules
            try:
                import torchx_plugins  # a namespace package spread over sys.path
            except ImportError:
                return self._modules
            for name in _module_names(list(torchx_plugins.__path__), "torchx_plugins."):
                _importing.depth = getattr(_importing, "depth", 0) + 1
                try:
                    self._modules.append(importlib.import_module(name))
                except Exception as e:  # a broken plugin is reported, never fatal
                    self._error(f"python:{name}", "python", _describe(e))
                finally:
                    _importing.depth -= 1
        return self._modules

    def _tagged(self, plugin_type: PluginType) -> List[Tuple[Factory, str]]:
        out = []
        for module in self._namespace_modules():
            for value in list(vars(module).values()):
                if callable(value) and getattr(value, "_plugin_type", None) == plugin_type:
                    if getattr(value, "__module__", module.__name__) == module.__name__:
                        out.append((value, module.__name__))
        return out

    def _add(self, found: Found, plugin_type: PluginType, fn: Factory, source: str) -> None:
        names: List[Tuple[str, Factory]] = [(cast(Any, fn)._plugin_name, fn)]
        if plugin_type == PluginType.NAMED_RESOURCE:
            names = self._named_resource_variants(fn, source)
        for name, factory in names:
            if name in found:
                self._error(source, "duplicate", f"{name} is already registered by {found[name][1]}", name, plugin_type)
            else:
                found[name] = (factory, source)

    def _named_resource_variants(self, fn: Factory, source: str) -> List[Tuple[str, Factory]]:
        """The names a named resource registers (itself, its aliases, ``<name>_<suffix>`` per
        fractional) as the core names them; what stays here is running the plugin's Python (the
        factory, a custom fractionals callable) to give the core a request it can expand."""
        from torchx._core import core
        from torchx.specs.api import resource_to_json

        name, fractionals = cast(Any, fn)._plugin_name, getattr(fn, "_plugin_fractionals", None)
        request: Dict[str, Any] = {"policy": "none"}
        whole: Optional[str] = None
        try:
            if fractionals is not None:
                rule = getattr(fractionals, "_fractionals_request", None)
                if rule is not None:  # register.powers_of_two_gpus, register.halve_mem_down_to(...)
                    request, whole = rule, json.dumps(resource_to_json(fn(fractional=1.0)))
                else:  # a {fraction: suffix} table, or a callable making one from the whole resource
                    table = fractionals(fn(fractional=1.0)) if callable(fractionals) else dict(fractionals)
                    request = {"policy": "list",
                               "list": [{"fraction": f, "suffix": str(s)} for f, s in table.items()]}
        except Exception as e:
            self._error(source, "python", f"named resource {name}: {_describe(e)}", name, PluginType.NAMED_RESOURCE)
        variants, error = core().named_resource_variants(
            name, list(getattr(fn, "_plugin_aliases", [])), json.dumps(request), whole)
        if error:
            self._error(source, "python", error, name, PluginType.NAMED_RESOURCE)
        aliases = set(getattr(fn, "_plugin_aliases", []))
        out: List[Tuple[str, Factory]] = []
        for n, f in variants:
            call = fn if fractionals is None else functools.partial(fn, fractional=f)
            # TorchX's resource_tags: an alias answers with its base's name; a fractional variant
            # with its own, fractional unless it is the whole resource.
            tag_name = name if (n in aliases or fractionals is None) else n
            out.append((n, _tagged(call, tag_name, fractionals is not None and f != 1.0)))
        return out

    def _entry_points(self, plugin_type: PluginType) -> List[Tuple[str, Factory, str]]:
        from importlib import metadata

        out = []
        try:
            eps = metadata.entry_points(group=plugin_type.value)
        except TypeError:  # Python < 3.10
            eps = metadata.entry_points().get(plugin_type.value, [])  # type: ignore[attr-defined,arg-type]
        for ep in eps:
            dist = getattr(getattr(ep, "dist", None), "name", None) or ep.value
            try:
                fn = ep.load()
            except Exception as e:
                self._error(f"entrypoint:{dist}", "python", f"{ep.name} = {ep.value}: {_describe(e)}", ep.name,
                            plugin_type)
                continue
            warnings.warn(
                f"torchx plugin {ep.name} ({plugin_type.value}) comes from an entry point, which is deprecated: "
                "move it to a torchx_plugins.* module decorated with torchx.plugins.register",
                DeprecationWarning,
                stacklevel=3,
            )
            out.append((ep.name, fn, dist))
        return out

    def _error(self, source: str, kind: str, message: str, name: Optional[str] = None,
               plugin_type: Optional[PluginType] = None) -> None:
        with self._lock:
            self._errors.append((source, kind, message))
            self._recorded.append(RegistrationError(
                module=source.split(":", 1)[-1], error=message, name=name,
                plugin_type=plugin_type.name.lower() if plugin_type is not None else None))

    # ---- the core's side ----

    def _core_info(self, plugin_type: PluginType) -> List[Tuple[str, str]]:
        from torchx._core import core

        return [tuple(x) for x in core().plugins_info(CORE_NAMES[plugin_type])]

    def _sync_core(self) -> None:
        for t in PluginType:
            self._core_info(t)

    def provide(self, core_type: str) -> Dict[str, Any]:
        """What the core asks for on first use of a type: this registry's Python plugins."""
        by_core = {v: k for k, v in CORE_NAMES.items()}
        out: Dict[str, Any] = {"entries": [], "errors": []}
        if core_type in by_core:
            plugin_type = by_core[core_type]
            for name, (factory, source) in self._discover(plugin_type).items():
                out["entries"].append((name, source, factory))
        with self._lock:
            out["errors"], self._errors = self._errors, []
        return out


def _module_names(paths: List[str], prefix: str) -> List[str]:
    """Every module under a namespace package's directories, subpackages with or without
    __init__.py included (pkgutil skips namespace subpackages)."""
    names: List[str] = []
    subdirs: Dict[str, List[str]] = {}
    for path in paths:
        try:
            entries = sorted(os.listdir(path))
        except OSError:
            continue
        for entry in entries:
            full = os.path.join(path, entry)
            stem, ext = os.path.splitext(entry)
            if ext == ".py" and stem.isidentifier() and stem != "__init__":
                names.append(prefix + stem)
            elif os.path.isdir(full) and entry.isidentifier() and entry != "__pycache__":
                subdirs.setdefault(entry, []).append(full)
    for sub, dirs in sorted(subdirs.items()):
        names += _module_names(dirs, f"{prefix}{sub}.")
    return list(dict.fromkeys(names))


def _tagged(factory: Factory, name: str, fractional: bool) -> Factory:
    """``factory`` whose resources carry resource_tags.RESOURCE_NAME and IS_FRACTIONAL."""
    from torchx.plugins._registration import resource_tags

    @functools.wraps(factory)
    def make(*args: Any, **kwargs: Any) -> Any:
        resource = factory(*args, **kwargs)
        tags = getattr(resource, "tags", None)
        if isinstance(tags, dict):
            tags[resource_tags.RESOURCE_NAME] = name
            tags[resource_tags.IS_FRACTIONAL] = fractional
        return resource

    return make


def _describe(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    where = f" ({tb[-1].filename}:{tb[-1].lineno})" if tb else ""
    return f"{type(e).__name__}: {e}{where}"


def _core_factory(plugin_type: PluginType, name: str) -> Factory:
    if plugin_type == PluginType.SCHEDULER:
        def create(session_name: str = "torchx", **kwargs: Any) -> Any:
            from torchx.schedulers.api import SchedulerInfo

            return SchedulerInfo(name, session_name)

        create._torchx_core_backend = name  # type: ignore[attr-defined]  # the Runner lets the core drive it
        return create
    if plugin_type == PluginType.NAMED_RESOURCE:
        def resource() -> Any:
            from torchx.specs import named_resources

            return named_resources[name]

        return resource

    def describe() -> Dict[str, str]:
        return {"name": name}

    return describe


def _namespace_of(plugin_type: PluginType) -> str:
    return "torchx_plugins." + plugin_type.value[len("torchx."):]


_registry: Optional[PluginRegistry] = None
_registry_lock = threading.Lock()


def registry() -> PluginRegistry:
    """The cached PluginRegistry. TORCHX_PLUGINS_SOURCE picks where Python plugins come from (a
    PluginSource value: 0 none, 1 the namespace package, 2 entry points, 3 both, the default);
    TORCHX_NO_ENTRYPOINTS=1 leaves entry points out. ``registry.cache_clear()`` drops it."""
    global _registry
    with _registry_lock:
        if _registry is None:
            everything = PluginSource.NAMESPACE_PKG | PluginSource.ENTRYPOINT
            raw = os.environ.get("TORCHX_PLUGINS_SOURCE", str(int(everything)))
            try:
                value = int(raw)
                if not 0 <= value <= int(everything):
                    raise ValueError(raw)
            except ValueError:
                raise ValueError(f"TORCHX_PLUGINS_SOURCE={raw!r} is not valid: valid values are 0 (none), "
                                 "1 (namespace package only), 2 (entry points only), 3 (both)") from None
            sources = PluginSource(value)
            if os.environ.get("TORCHX_NO_ENTRYPOINTS") == "1":
                sources &= ~PluginSource.ENTRYPOINT
            _registry = PluginRegistry(plugin_sources=sources)
        return _registry


def _cache_clear() -> None:
    """Drops the cached registry and what the core took from it: the next use discovers again."""
    global _registry
    with _registry_lock:
        _registry = None
    from torchx._core import core

    core().forget_python_plugins()


registry.cache_clear = _cache_clear  # type: ignore[attr-defined]  # as functools.lru_cache's


def _core_provider(core_type: str) -> Dict[str, Any]:
    """Called by the core (python/ext/plugins_bindings.cc) the first time it needs a type."""
    return registry().provide(core_type)
