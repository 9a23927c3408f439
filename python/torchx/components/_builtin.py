"""Python functions for the core's builtin components.

Each function carries a real ``inspect.Signature`` (Ax injects ``trial_idx``/``tracker_base``
only when ``inspect.getfullargspec`` lists them) and calls the core with the arguments it was
given; defaults are filled by the core from the same declaration the CLI uses.
"""

import inspect
import json
import warnings
from typing import Any, Callable, Dict, List, Optional

from torchx._core import core
from torchx.specs.api import AppDef, from_json

_TYPES: Dict[str, Any] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "list": List[str],
    "dict": Dict[str, str],
}


def builtin(name: str, module: str) -> Callable[..., AppDef]:
    spec = json.loads(core().component_spec(name))
    params = []
    annotations: Dict[str, Any] = {}
    varargs = spec.get("varargs")
    kind: inspect._ParameterKind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    if varargs:
        params.append(inspect.Parameter(varargs["name"], inspect.Parameter.VAR_POSITIONAL, annotation=str))
        annotations[varargs["name"]] = str
        kind = inspect.Parameter.KEYWORD_ONLY
    required_first = [p for p in spec["params"] if p["required"]] + [p for p in spec["params"] if not p["required"]]
    ordered = spec["params"] if varargs else required_first
    for p in ordered:
        tp = _TYPES[p["type"]]
        if p["optional"]:
            tp = Optional[tp]
        default = inspect.Parameter.empty if p["required"] else p["default"]
        params.append(inspect.Parameter(p["name"], kind, default=default, annotation=tp))
        annotations[p["name"]] = tp
    signature = inspect.Signature(params, return_annotation=AppDef)
    short = name.split(".")[-1]

    deprecation = spec.get("deprecation")

    def component(*args: Any, **kwargs: Any) -> AppDef:
        if deprecation:
            warnings.warn(deprecation, UserWarning, stacklevel=2)
        bound = signature.bind(*args, **kwargs)
        values = dict(bound.arguments)
        if varargs and varargs["name"] in values:
            values[varargs["name"]] = [str(a) for a in values[varargs["name"]]]
        return from_json(json.loads(core().build_component(name, json.dumps(values))))

    component.__name__ = short
    component.__qualname__ = short
    component.__module__ = module
    component.__signature__ = signature  # type: ignore[attr-defined]
    component.__annotations__ = {**annotations, "return": AppDef}
    component.__doc__ = _docstring(spec)
    component._torchx_component = name  # type: ignore[attr-defined]  # the registry's name for it
    return component


def builtin_deprecation(name: str) -> Optional[str]:
    """The warning a deprecated registered component (``dist.ddp``) gives; None for any other
    name. File components are not loaded to find out: only registered ones can be aliases."""
    if name not in core().component_names():
        return None
    return json.loads(core().component_spec(name)).get("deprecation")


def _docstring(spec: Dict[str, Any]) -> str:
    lines = [spec["summary"]]
    if spec["description"]:
        lines += ["", spec["description"]]
    lines += ["", "Args:"]
    if spec.get("varargs"):
        lines.append(f"    {spec['varargs']['name']}: {spec['varargs']['help']}")
    for p in spec["params"]:
        lines.append(f"    {p['name']}: {p['help']}")
    return "\n".join(lines)
