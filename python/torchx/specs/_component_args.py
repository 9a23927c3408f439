"""A Python component's parameters as the core sees them, and back: the ComponentSpec JSON the
core's argument parser reads (types, defaults, help from the docstring), and the core's typed
values converted to the annotations and passed to the function. Used by ``torchx.specs.builders``
(TorchX's home for this) and by the component loader above it."""

import inspect
import typing
from typing import Any, Callable, Dict, List, Tuple

from torchx._exceptions import ComponentValidationException
from torchx.specs.api import AppDef



def _unwrap_optional(tp: Any) -> Tuple[Any, bool]:
    if typing.get_origin(tp) is typing.Union or type(tp).__name__ == "UnionType":
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return tp, False


def _kind(tp: Any) -> str:
    origin = typing.get_origin(tp) or tp
    if origin in (list, tuple, List, Tuple):
        return "list"
    if origin in (dict, Dict):
        return "dict"
    if tp in (int, float, bool):
        return tp.__name__
    return "str"


def _docs(fn: Callable[..., Any]) -> Tuple[str, str, Dict[str, str]]:
    import docstring_parser

    doc = inspect.getdoc(fn)
    if not doc:
        return f"{fn.__name__} TIP: improve this help string by adding a docstring to your component", "", {}
    parsed = docstring_parser.parse(doc)
    helps = {p.arg_name.lstrip("*"): p.description or "" for p in parsed.params}
    return parsed.short_description or fn.__name__, parsed.long_description or "", helps


def component_spec(name: str, fn: Callable[..., Any]) -> Dict[str, Any]:
    """The ComponentSpec JSON object the core's argument parser reads."""
    summary, description, helps = _docs(fn)
    hints = typing.get_type_hints(fn)
    params: List[Dict[str, Any]] = []
    varargs = None
    for p in inspect.signature(fn).parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            varargs = {"name": p.name, "help": helps.get(p.name, p.name)}
            continue
        if p.kind == p.VAR_KEYWORD:
            continue
        tp, optional = _unwrap_optional(hints.get(p.name, str))
        required = p.default is inspect.Parameter.empty
        default = None if required else p.default
        if default is not None and not isinstance(default, (str, int, float, bool)):
            default = list(default) if isinstance(default, (list, tuple)) else default
        if default is not None and not isinstance(default, (str, int, float, bool, list, dict)):
            default = str(default)
        params.append(
            {
                "name": p.name,
                "type": _kind(tp),
                "optional": optional or (not required and p.default is None),
                "required": required,
                "default": default,
                "help": helps.get(p.name, p.name),
            }
        )
    return {"name": name, "summary": summary, "description": description, "params": params, "varargs": varargs}


def _cast(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    tp, _ = _unwrap_optional(tp)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (list, List) and args:
        return [_cast(args[0], v) for v in value]
    if origin in (tuple, Tuple):
        elem = args[0] if args else str
        return tuple(_cast(elem, v) for v in value)
    if origin in (dict, Dict) and len(args) == 2:
        return {_cast(args[0], k): _cast(args[1], v) for k, v in value.items()}
    if tp is bool and isinstance(value, str):
        return value.lower() == "true"
    if tp in (int, float, str) and not isinstance(value, tp):
        return tp(value)
    return value


def convert_value(fn: Callable[..., Any], name: str, value: Any) -> Any:
    """The core's value for parameter ``name`` as the type its annotation declares."""
    return _cast(typing.get_type_hints(fn).get(name, str), value)


def call_with_values(fn: Callable[..., AppDef], values: Dict[str, Any], varargs: List[str]) -> AppDef:
    """Calls ``fn`` with the core's typed values, converting list/dict element types."""
    hints = typing.get_type_hints(fn)
    kwargs = {k: _cast(hints.get(k, str), v) for k, v in values.items()}
    sig = inspect.signature(fn)
    positional = [p for p in sig.parameters.values() if p.kind == p.VAR_POSITIONAL]
    if positional:
        # Parameters before *args must be passed positionally for Python to accept the call.
        before = []
        for p in sig.parameters.values():
            if p.kind == p.VAR_POSITIONAL:
                break
            before.append(kwargs.pop(p.name))
        app = fn(*before, *varargs, **kwargs)
    else:
        app = fn(**kwargs)
    if not isinstance(app, AppDef):
        raise ComponentValidationException(f"component {fn.__name__} returned {type(app).__name__}, not an AppDef")
    return app


def keep_dict_order(values: Dict[str, Any], argv: List[str]) -> Dict[str, Any]:
    """The core keeps dict arguments sorted by key; a Python component sees them in the order the
    command line gave them (TorchX's), which decides e.g. which role comes first."""
    from torchx.util.types import to_dict

    for i, token in enumerate(argv):
        if token == "--":
            break
        name, eq, text = token.lstrip("-").partition("=")
        if not token.startswith("-") or not isinstance(values.get(name), dict):
            continue
        if not eq:
            if i + 1 >= len(argv):
                continue
            text = argv[i + 1]
        try:
            order = list(to_dict(text))
        except ValueError:
            continue
        d = values[name]
        values[name] = {k: d[k] for k in order if k in d} | {k: v for k, v in d.items() if k not in order}
    return values
