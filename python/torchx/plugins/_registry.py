"""PluginRegistry: Python discovery (torchx_plugins.* namespace modules, entry points) merged
with the core's registry (built-ins and native plugins).

Python plugins are also handed to the core (``_core_provider``), so that the Runner, named
resource lookups and the report see one registry; the core asks for each type once, on its
first use.
"""

import functools
import importlib
import json
import logging
import os
import threading
import traceback
import warnings
from typing import Any, Callable, Dict, List, Optional, Tuple, overload

from torchx.plugins._types import CORE_NAMES, PluginType

logger: logging.Logger = logging.getLogger(__name__)

Factory = Callable[..., Any]
# name -> (factory, source)
Found = Dict[str, Tuple[Factory, str]]


class PluginRegistry:
    """Immutable from the outside, lazily populated: each plugin type is discovered on its first
    ``get()`` and cached. ``get`` never returns None; ``info`` returns copies."""

    def __init__(self, *, load_entrypoints: bool = True) -> None:
        self._load_entrypoints = load_entrypoints
        self._lock = threading.RLock()
        self._python: Dict[PluginType, Found] = {}
        self._errors: List[Tuple[str, str, str]] = []  # (source, kind, message)
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
                if self._load_entrypoints and os.environ.get("TORCHX_NO_ENTRYPOINTS") != "1":
                    for name, fn, dist in self._entry_points(plugin_type):
                        if name in found:
                            self._errors.append((f"entrypoint:{dist}", "duplicate",
                                                 f"{name} is already registered by {found[name][1]}"))
                        else:
                            found[name] = (fn, f"entrypoint:{dist}")
                self._python[plugin_type] = found
            return self._python[plugin_type]

    def _namespace_modules(self) -> List[Any]:
        if self._modules is None:
            self._modules = []
            try:
                import torchx_plugins  # a namespace package spread over sys.path
            except ImportError:
                return self._modules
            for name in _module_names(list(torchx_plugins.__path__), "torchx_plugins."):
                try:
                    self._modules.append(importlib.import_module(name))
                except Exception as e:  # a broken plugin is reported, never fatal
                    self._errors.append((f"python:{name}", "python", _describe(e)))
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
        names: List[Tuple[str, Factory]] = [(fn._plugin_name, fn)]
        if plugin_type == PluginType.NAMED_RESOURCE:
            names = self._named_resource_variants(fn, source)
        for name, factory in names:
            if name in found:
                self._errors.append((source, "duplicate", f"{name} is already registered by {found[name][1]}"))
            else:
                found[name] = (factory, source)

    def _named_resource_variants(self, fn: Factory, source: str) -> List[Tuple[str, Factory]]:
        """The names a named resource registers (itself, its aliases, ``<name>_<suffix>`` per
        fractional) as the core names them; what stays here is running the plugin's Python (the
        factory, a custom fractionals callable) to give the core a request it can expand."""
        from torchx._core import core
        from torchx.specs.api import resource_to_json

        name, fractionals = fn._plugin_name, getattr(fn, "_plugin_fractionals", None)
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
            self._errors.append((source, "python", f"named resource {name}: {_describe(e)}"))
        variants, error = core().named_resource_variants(
            name, list(getattr(fn, "_plugin_aliases", [])), json.dumps(request), whole)
        if error:
            self._errors.append((source, "python", error))
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
            eps = metadata.entry_points().get(plugin_type.value, [])  # type: ignore[attr-defined]
        for ep in eps:
            dist = getattr(getattr(ep, "dist", None), "name", None) or ep.value
            try:
                fn = ep.load()
            except Exception as e:
                self._errors.append((f"entrypoint:{dist}", "python", f"{ep.name} = {ep.value}: {_describe(e)}"))
                continue
            warnings.warn(
                f"torchx plugin {ep.name} ({plugin_type.value}) comes from an entry point, which is deprecated: "
                "move it to a torchx_plugins.* module decorated with torchx.plugins.register",
                DeprecationWarning,
                stacklevel=3,
            )
            out.append((ep.name, fn, dist))
        return out

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


_registry: Optional[PluginRegistry] = None
_registry_lock = threading.Lock()


def registry() -> PluginRegistry:
    """The cached PluginRegistry (entry points included unless TORCHX_NO_ENTRYPOINTS=1)."""
    global _registry
    with _registry_lock:
        if _registry is None:
            _registry = PluginRegistry()
        return _registry


def _core_provider(core_type: str) -> Dict[str, Any]:
    """Called by the core (python/ext/plugins_bindings.cc) the first time it needs a type."""
    return registry().provide(core_type)
