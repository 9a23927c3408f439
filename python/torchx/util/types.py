"""Decoding component arguments from their CLI strings by the parameter's annotation, as
TorchX does (``List[int]`` from ``1,2``, ``Dict[str, int]`` from ``a=1,b=2``, ...)."""

import inspect
from types import UnionType
from typing import Annotated, Any, Callable, Dict, List, Optional, TypeVar, Union, get_args, get_origin

_PRIMITIVES = (int, str, float)


def to_list(arg: str) -> List[str]:
    """``"a, b"`` -> ``["a", "b"]`` (items stripped); a blank string -> ``[]``."""
    if not arg.strip():
        return []
    return [item.strip() for item in arg.split(",")]


def to_dict(arg: str) -> Dict[str, str]:
    """``"K=v1,v2,K2=v3"`` -> ``{"K": "v1,v2", "K2": "v3"}``: pairs split on ``,`` or ``;``
    (the last one before the next ``=``), quoted values keep delimiters; ``""`` -> ``{}``.
    The core parses it (the same rules as ``-cfg``); ValueError names the piece it cannot split."""
    if not arg:
        return {}
    from torchx._core import core

    return core().cfg_string_to_dict(arg)


def _unannotated(tp: Any) -> Any:
    return get_args(tp)[0] if get_origin(tp) is Annotated else tp


def is_bool(param_type: Any) -> bool:
    return param_type is bool


def is_primitive(param_type: Any) -> bool:
    """True for int, str and float (bool is decoded apart)."""
    return param_type in _PRIMITIVES


def decode_optional(param_type: Any) -> Any:
    """``Optional[X]`` / ``X | None`` -> ``X``; any other type as given."""
    is_union = isinstance(param_type, UnionType) or get_origin(param_type) is Union
    if not is_union:
        return param_type
    args = param_type.__args__
    if len(args) == 2 and args[1] is type(None):
        return args[0]
    return param_type


def _decode_list(encoded: str, tp: Any) -> List[Any]:
    args = getattr(tp, "__args__", None)
    if not args or len(args) != 1:
        raise ValueError(f"param_type must be a `list` type, but was `{tp}`")
    item_type = args[0]
    if not is_primitive(item_type):
        raise ValueError("List types support only primitives: int, str, float")
    return [item_type(v) for v in to_list(encoded)]


def _decode_dict(encoded: str, tp: Any) -> Dict[Any, Any]:
    args = getattr(tp, "__args__", None)
    if not args or len(args) != 2:
        raise ValueError(f"param_type must be a `dict` type, but was `{tp}`")
    key_type, value_type = args
    return {key_type(k): value_type(v) for k, v in to_dict(encoded).items()}


def decode_from_string(encoded_value: str, annotation: Any) -> Union[Dict[Any, Any], List[Any], None]:
    """A ``list``/``dict`` annotation's value from its string form; None for an empty string;
    ValueError for other annotations."""
    if not encoded_value:
        return None
    tp = _unannotated(annotation)
    origin = getattr(tp, "__origin__", None)
    if origin is dict:
        return _decode_dict(encoded_value, tp)
    if origin is list:
        return _decode_list(encoded_value, tp)
    raise ValueError(f"unsupported argument annotation `{annotation}`, expected dict or list")


def decode(encoded_value: Any, annotation: Any) -> Any:
    """The typed value of a component argument: bools from ``"true"``/``"false"``, lists and dicts
    from their string forms; primitives and already-decoded values are returned as given."""
    if encoded_value is None:
        return None
    tp = _unannotated(annotation)
    if is_bool(tp):
        if isinstance(encoded_value, bool):
            return encoded_value
        return bool(encoded_value) and encoded_value.lower() == "true"
    if not is_primitive(tp) and isinstance(encoded_value, str):
        return decode_from_string(encoded_value, annotation)
    return encoded_value


def get_argparse_param_type(parameter: inspect.Parameter) -> Callable[[str], object]:
    """The ``type=`` argparse should use for a component parameter: the primitive itself, else str
    (lists and dicts are decoded afterwards)."""
    tp = _unannotated(parameter.annotation)
    return tp if is_primitive(tp) else str


_T = TypeVar("_T")


def none_throws(optional: Optional[_T], message: str = "Unexpected `None`") -> _T:
    """``optional`` itself, or AssertionError(message) when it is None."""
    if optional is None:
        raise AssertionError(message)
    return optional
