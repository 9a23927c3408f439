"""User components written in Python: ``path/to/file.py:fn`` and ``pkg.module:fn``.

A component is a function annotated ``-> AppDef`` (or ``specs.AppDef``) whose parameters are
typed with str/int/float/bool, Optional[...] of those, List/Dict/Tuple of primitives. It is
checked with TorchX's linter rules (same messages), described to the core as a ComponentSpec
(parameter types, defaults, help from its Google-style docstring) so that the core parses CLI
arguments exactly as for builtins, and called with the typed values the core returns.
"""

import importlib
import importlib.util
import inspect
import json
import os
import sys
import typing
from types import ModuleType
from typing import Any, Callable, List, Optional, Tuple

from torchx._exceptions import ComponentNotFoundException, ComponentValidationException
from torchx.specs._component_args import (
    _cast,
    _kind,
    _unwrap_optional,
    call_with_values,
    component_spec,
    convert_value,
    keep_dict_order,
)
from torchx.specs.api import AppDef

# The typed-argument helpers live with the specs (torchx.specs._component_args); the names stay
# importable from here, where callers have always found them.
__all__ = [
    "_cast", "_kind", "_unwrap_optional", "call_component", "call_with_values", "component_spec", "convert_value",
    "keep_dict_order", "lint", "load_component_fn",
]

_PRIMITIVES = {"int", "str", "float", "bool"}


def _split(name: str) -> Tuple[str, str]:
    path, sep, fn = name.rpartition(":")
    if not sep or not path or not fn:
        raise ComponentNotFoundException(f"component `{name}`: expected `path/to/file.py:function` or `module:function`")
    return path, fn


def _load_module(path: str) -> Tuple[ModuleType, Optional[str]]:
    if path.endswith(".py") or os.sep in path:
        if not os.path.isfile(path):
            raise ComponentNotFoundException(f"component file {path}: no such file")
        mod_name = "torchx_component_" + os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(mod_name, path)
        if spec is None or spec.loader is None:
            raise ComponentNotFoundException(f"component file {path}: cannot be loaded as Python")
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        spec.loader.exec_module(module)
        return module, path
    try:
        module = importlib.import_module(path)
    except ModuleNotFoundError as e:
        raise ComponentNotFoundException(f"component module `{path}`: {e}") from e
    return module, getattr(module, "__file__", None)


def load_component_fn(name: str) -> Callable[..., AppDef]:
    """Imports the component and runs the linter; ComponentNotFoundException or
    ComponentValidationException (all linter errors, one per line) on failure."""
    path, fn_name = _split(name)
    module, source_file = _load_module(path)
    fn = getattr(module, fn_name, None)
    if inspect.isclass(fn):
        if not callable(getattr(fn, "build", None)):
            raise ComponentValidationException(f"Class component `{fn_name}` must define a `build(self) -> AppDef` method")
        fn = _component_fn_from_class(fn)
    if fn is None or not callable(fn):
        found = sorted(n for n, v in vars(module).items() if inspect.isfunction(v) and not n.startswith("_"))
        raise ComponentNotFoundException(
            f"component `{name}`: no function `{fn_name}` in {source_file or path}. Functions there: {found}"
        )
    if source_file and source_file.endswith(".py"):
        errors = lint(source_file, fn_name)
        if errors:
            raise ComponentValidationException("\n".join(errors))
    return fn


def _component_fn_from_class(cls: type) -> Callable[..., AppDef]:
    """A class-based component (torchx-nightly, TorchX #1416: its constructor's parameters are the
    component's arguments, ``build(self) -> AppDef`` makes the app) as a component function: the
    constructor's signature and resolved type hints, the class's name and docstring."""

    def component_fn(*args: Any, **kwargs: Any) -> AppDef:
        return cls(*args, **kwargs).build()  # type: ignore[attr-defined]

    hints = typing.get_type_hints(cls.__init__)  # type: ignore[misc]  # in the class's module
    hints.pop("return", None)
    component_fn.__signature__ = inspect.signature(cls)  # type: ignore[attr-defined]
    component_fn.__annotations__ = {**hints, "return": AppDef}
    component_fn.__name__ = component_fn.__qualname__ = cls.__name__
    component_fn.__doc__ = cls.__doc__
    component_fn.__module__ = cls.__module__
    component_fn.__wrapped__ = cls  # type: ignore[attr-defined]
    return component_fn


def lint(source_file: str, function_name: str) -> List[str]:
    """torchx.specs.file_linter's messages as ``line N: description`` lines ([] when valid)."""
    from torchx.specs import file_linter

    return [m.description if not m.line else f"line {m.line}: {m.description}"
            for m in file_linter.validate(source_file, function_name)]


def call_component(fn: Callable[..., AppDef], component_args: Any) -> AppDef:
    """``Runner.run_component`` for a Python component: a dict of values, or CLI-style strings
    parsed by the core against the function's ComponentSpec."""
    from torchx._core import core

    spec = json.dumps(component_spec(fn.__name__, fn))
    if isinstance(component_args, dict):
        parsed = json.loads(core().component_args_from_json(spec, json.dumps(component_args)))
    else:
        argv = list(component_args or [])
        parsed = json.loads(core().parse_component_args(spec, argv))
        keep_dict_order(parsed["values"], argv)
    return call_with_values(fn, parsed["values"], parsed["varargs"])
