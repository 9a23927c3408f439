"""Finding components by name (TorchX's torchx.specs.finder).

``get_component("dist.ddp")`` answers from the core's registry (builtins, native and Python
plugins, ``[torchx.components]`` entry points: what ``torchx builtins`` lists); a name with a ``:``
(``path/to/file.py:fn``) is a function in a file, linted first. ``ModuleComponentsFinder`` scans a
Python package for component functions, as TorchX does for its entry points.
"""

import abc
import copy
import importlib
import inspect
import os
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable, Dict, Iterator, List, Optional, Union

from torchx._exceptions import ComponentNotFoundException, ComponentValidationException
from torchx.specs.api import AppDef
from torchx.specs.file_linter import ComponentFunctionValidator, get_fn_docstring, read_conf_file, validate

__all__ = [
    "ComponentNotFoundException", "ComponentValidationException", "ComponentsFinder", "CustomComponentsFinder",
    "ModuleComponentsFinder", "get_component", "get_components", "module_relname",
]


@dataclass
class _Component:
    """A component: its name, description (the docstring's), function and linter errors."""

    name: str
    description: str
    fn_name: str
    fn: Callable[..., AppDef]
    validation_errors: List[str]


class ComponentsFinder(abc.ABC):
    @abc.abstractmethod
    def find(self, validators: Optional[List[ComponentFunctionValidator]]) -> List[_Component]:
        """The components this finder knows, each with its linter errors (``validators``)."""


def is_namespace_package(module: ModuleType) -> bool:
    return getattr(module, "__file__", None) is None


def is_package(module: ModuleType) -> bool:
    return hasattr(module, "__path__")


def module_relname(module: ModuleType, relative_to: ModuleType) -> str:
    """``module``'s dotted name below ``relative_to`` ("" for itself); ValueError otherwise."""
    name, base = module.__name__, relative_to.__name__
    if name == base:
        return ""
    if not name.startswith(base + "."):
        raise ValueError(f"`{name}` is not a submodule of `{base}`")
    return name[len(base) + 1:]


class ModuleComponentsFinder(ComponentsFinder):
    """The functions of a module and, for a package, of its sub-modules (recursively), named
    ``<group>.<relative module>.<fn>`` (empty parts left out)."""

    def __init__(self, module: Union[str, ModuleType], group: str) -> None:
        self.base_module = self._try_import(module)
        self.group = group

    @staticmethod
    def _try_import(module: Union[str, ModuleType]) -> ModuleType:
        return importlib.import_module(module) if isinstance(module, str) else module

    def _iter_modules_recursive(self, module: Union[str, ModuleType]) -> Iterator[ModuleType]:
        module = self._try_import(module)
        if not is_namespace_package(module):
            yield module
        if is_package(module):
            for info in pkgutil.iter_modules(module.__path__, prefix=f"{module.__name__}."):
                if info.ispkg:
                    yield from self._iter_modules_recursive(info.name)
                else:
                    yield self._try_import(info.name)

    def find(self, validators: Optional[List[ComponentFunctionValidator]]) -> List[_Component]:
        return [c for m in self._iter_modules_recursive(self.base_module) for c in self._components_of(m, validators)]

    def _components_of(
        self, module: ModuleType, validators: Optional[List[ComponentFunctionValidator]]
    ) -> List[_Component]:
        path = os.path.abspath(module.__file__ or "")
        rel = module_relname(module, relative_to=self.base_module)
        out = []
        for fn_name, fn in inspect.getmembers(module, inspect.isfunction):
            errors = [m.description for m in validate(path, fn_name, validators)]
            description, _ = get_fn_docstring(fn)
            name = ".".join(p for p in (self.group, rel, fn_name) if p)
            out.append(_Component(name, description, fn_name, fn, errors))
        return out


class CustomComponentsFinder(ComponentsFinder):
    """One function in a Python file (``path/to/file.py:fn``), run in a fresh namespace."""

    def __init__(self, filepath: str, function_name: str) -> None:
        self._filepath = filepath
        self._function_name = function_name

    def find(self, validators: Optional[List[ComponentFunctionValidator]]) -> List[_Component]:
        errors = [m.description for m in validate(self._filepath, self._function_name, validators)]
        namespace: Dict[str, object] = copy.copy(globals())
        namespace["__file__"] = os.path.abspath(self._filepath)  # for components that read it
        exec(compile(read_conf_file(self._filepath), self._filepath, "exec"), namespace)  # noqa: S102
        fn = namespace.get(self._function_name)
        if fn is None:
            raise ComponentNotFoundException(f"Function {self._function_name} does not exist in file {self._filepath}")
        fn = _as_component_fn(fn, self._function_name)
        description, _ = get_fn_docstring(fn)  # type: ignore[arg-type]
        name = f"{self._filepath}:{self._function_name}"
        return [_Component(name, description, self._function_name, fn, errors)]  # type: ignore[arg-type]


def _as_component_fn(obj: object, name: str) -> Callable[..., AppDef]:
    """A component function as found, or a class component (torchx-nightly: a class with a
    ``build(self) -> AppDef`` method) as the function that builds the class and calls ``build``,
    with the constructor's parameters as its own."""
    if not inspect.isclass(obj):
        return obj  # type: ignore[return-value]
    if not callable(getattr(obj, "build", None)):
        raise ComponentValidationException(f"Class component `{name}` must define a `build(self) -> AppDef` method")
    from torchx.components._loader import _component_fn_from_class

    return _component_fn_from_class(obj)


def _module_component(name: str, validators: Optional[List[ComponentFunctionValidator]] = None
                      ) -> Optional[_Component]:
    """``pkg.module:fn`` or ``pkg.module.fn`` (a function or a class component in an importable
    module), or None when no module of that name imports."""
    path, sep, fn_name = name.rpartition(":") if ":" in name else name.rpartition(".")
    if not path or not fn_name:
        return None
    try:
        module = importlib.import_module(path)
    except ModuleNotFoundError as e:
        if e.name and (path == e.name or path.startswith(e.name + ".")):
            return None  # no such module; a dependency missing inside one is its own error
        raise
    obj = getattr(module, fn_name, None)
    if obj is None and ":" not in name:
        return None  # `a.b` named no builtin and is no attribute of module `a` either: not found
    if obj is None:
        raise ComponentNotFoundException(f"Function {fn_name} does not exist in module {path}")
    fn = _as_component_fn(obj, fn_name)
    # Linted where it is defined (a package may re-export it from another module).
    try:
        source: Optional[str] = inspect.getsourcefile(obj)  # type: ignore[arg-type]
    except TypeError:
        source = None
    errors = [m.description for m in validate(source, fn_name, validators)] if source and source.endswith(".py") else []
    description, _ = get_fn_docstring(fn)
    return _Component(name, description, fn_name, fn, errors)


def _registered_components() -> List[_Component]:
    """The core registry's components as Python functions (the ones torchx.components exports)."""
    from torchx._core import core
    from torchx.components._builtin import builtin

    out = []
    for name in core().component_names():
        module = "torchx.components." + name.rpartition(".")[0] if "." in name else "torchx.components"
        fn = builtin(name, module)
        summary = (fn.__doc__ or "").split("\n", 1)[0]  # builtin() writes the spec's summary first
        out.append(_Component(name, summary, fn.__name__, fn, []))
    return out


def _load_components(validators: Optional[List[ComponentFunctionValidator]]) -> Dict[str, _Component]:
    """Every named component: the core registry's (builtins and plugins) and the Python ones of
    ``[torchx.components]`` entry points (``_``-prefixed entry names add no group prefix)."""
    from torchx.util import entrypoints

    components = {c.name: c for c in _registered_components()}
    for group, load in entrypoints.load_group("torchx.components").items():
        module = load()
        if not isinstance(module, (ModuleType, str)):
            raise ComponentValidationException(
                f"the `{group}` entry point in group `torchx.components` must load a module or a module name, "
                f"got {type(module).__name__}"
            )
        for c in ModuleComponentsFinder(module, "" if group.startswith("_") else group).find(validators):
            components.setdefault(c.name, c)
    return components


def get_components(validators: Optional[List[ComponentFunctionValidator]] = None) -> Dict[str, _Component]:
    """Every component without linter errors, by name."""
    return {n: c for n, c in _load_components(validators).items() if not c.validation_errors}


def get_component(name: str, validators: Optional[List[ComponentFunctionValidator]] = None) -> _Component:
    """The component ``name`` (``dist.ddp`` or ``path/to/file.py:fn``). ComponentNotFoundException
    when there is none, ComponentValidationException (the linter's messages) when it is invalid."""
    if ":" in name:
        path, _, fn_name = name.rpartition(":")
        if Path(path).is_file():
            components = {c.name: c for c in CustomComponentsFinder(path, fn_name).find(validators)}
        elif path.endswith(".py") or os.sep in path or (module_component := _module_component(name, validators)) is None:
            raise ComponentNotFoundException(f"component file {path}: no such file")
        else:
            components = {name: module_component}
    else:
        components = _load_components(validators)
        if name not in components and "." in name:  # `pkg.module.fn`: a function or class of a module
            module_component = _module_component(name, validators)
            if module_component is not None:
                components[name] = module_component
    component = components.get(name)
    if component is None:
        raise ComponentNotFoundException(
            f"Component `{name}` not found. Please make sure it is one of the builtins: `torchx builtins`. "
            "Or registered via `[torchx.components]` entry point"
        )
    if component.validation_errors:
        raise ComponentValidationException(
            f"Component {name} has validation errors: \n {os.linesep.join(component.validation_errors)}"
        )
    return component
