"""Building AppDefs from component functions and their CLI arguments (TorchX's
torchx.specs.builders). Arguments are parsed by the core against the function's declaration
(the same parser ``torchx run file.py:fn ...`` uses); this module adds TorchX's Python API over it:
``parse_args`` (a Namespace), ``component_args_from_str``, ``materialize_appdef``."""

import sys
from typing import TYPE_CHECKING, Any, Callable, Dict, List, NamedTuple, Optional, Union

if TYPE_CHECKING:
    import argparse

from torchx._core import core
from torchx.specs.api import AppDef, BindMount, DeviceMount, VolumeMount, _mount_from_json, make_app_handle

__all__ = ["ComponentArgs", "component_args_from_str", "make_app_handle", "materialize_appdef", "parse_args",
           "parse_mounts"]


class ComponentArgs(NamedTuple):
    """A component call's arguments, split the way the function takes them."""

    positional_args: Dict[str, Any]
    var_args: List[str]
    kwargs: Dict[str, Any]


def _create_args_parser(
    cmpnt_fn: Callable[..., AppDef],
    cmpnt_defaults: Optional[Dict[str, str]] = None,
    config: Optional[Dict[str, Any]] = None,
) -> "argparse.ArgumentParser":
    """An argparse parser describing the component's arguments (for ``--help`` and tools that
    want one); ``parse_args`` below parses with the core, which the CLI uses too."""
    import argparse  # here: only callers that want a parser pay for argparse

    from torchx.specs.file_linter import TorchXArgumentHelpFormatter, get_fn_docstring
    from torchx.util.types import get_argparse_param_type, is_bool

    description, helps = get_fn_docstring(cmpnt_fn)
    parser = argparse.ArgumentParser(
        prog=f"torchx run <run args...> {cmpnt_fn.__name__} ",
        description=description,
        formatter_class=TorchXArgumentHelpFormatter,
        add_help=False,  # -h may be a component parameter
    )
    parser.add_argument("--help", action="help", default=argparse.SUPPRESS, help="show this help message and exit")
    import inspect

    for name, p in inspect.signature(cmpnt_fn).parameters.items():
        kwargs: Dict[str, Any] = {"help": helps.get(name, " "), "type": get_argparse_param_type(p)}
        if p.default is not inspect.Parameter.empty:
            kwargs["default"] = str(p.default) if is_bool(type(p.default)) else p.default
        if cmpnt_defaults and name in cmpnt_defaults:
            kwargs["default"] = cmpnt_defaults[name]
        if p.kind == p.VAR_POSITIONAL:
            parser.add_argument(name, nargs=argparse.REMAINDER, **kwargs)
            continue
        flags = [f"--{name}"]
        metadata = getattr(p.annotation, "__metadata__", None)
        if metadata:
            flags = [m for m in metadata if isinstance(m, str) and m.startswith("-")] + flags
        elif len(name) == 1:
            flags.insert(0, f"-{name}")
        if "default" not in kwargs and not (config and name in config):
            kwargs["required"] = True
        parser.add_argument(*flags, **kwargs)
    return parser


def _core_parse(cmpnt_fn: Callable[..., AppDef], cmpnt_args: List[str], preset: Dict[str, Any]) -> Dict[str, Any]:
    """The core's typed values (and varargs) for ``cmpnt_args``; parameters in ``preset`` are
    optional and read None when the command line leaves them out."""
    from torchx.specs._component_args import component_spec, keep_dict_order

    spec = component_spec(cmpnt_fn.__name__, cmpnt_fn)
    for p in spec["params"]:
        if p["name"] in preset:
            p.update(required=False, optional=True, default=None)
    import json

    try:
        parsed = json.loads(core().parse_component_args(json.dumps(spec), list(cmpnt_args)))
        keep_dict_order(parsed["values"], list(cmpnt_args))
        return parsed
    except ValueError as e:
        # TorchX parses with argparse, which prints the usage and exits 2 on a bad command line.
        print(f"torchx run {cmpnt_fn.__name__}: error: {e}", file=sys.stderr)
        sys.exit(2)


def parse_args(
    cmpnt_fn: Callable[..., AppDef],
    cmpnt_args: List[str],
    cmpnt_defaults: Optional[Dict[str, Any]] = None,
    config: Optional[Dict[str, Any]] = None,
) -> "argparse.Namespace":
    """The component's arguments as a Namespace. Precedence: ``cmpnt_args`` (the command line) >
    ``config`` > ``cmpnt_defaults`` (strings, as .torchxconfig gives them) > the declared
    defaults. A bad command line prints the error and exits 2, as TorchX's argparse does."""
    import argparse
    import inspect

    from torchx.specs._component_args import convert_value
    from torchx.util.types import decode

    config = dict(config or {})
    defaults = dict(cmpnt_defaults or {})
    params = inspect.signature(cmpnt_fn).parameters
    parsed = _core_parse(cmpnt_fn, cmpnt_args, {**defaults, **config})
    values: Dict[str, Any] = {}
    for name, p in params.items():
        if p.kind == p.VAR_POSITIONAL:
            given = parsed.get("varargs") or []
            values[name] = given if given or name not in config else list(config[name])
            continue
        value = parsed["values"].get(name)
        if value is None and name in config:
            value = config[name]
        elif value is None and name in defaults:
            # Strings as .torchxconfig gives them, typed as argparse types a string default.
            value = defaults[name]
            if isinstance(value, str):
                value = convert_value(cmpnt_fn, name, decode(value, p.annotation))
        values[name] = value
    return argparse.Namespace(**values)


def component_args_from_str(
    cmpnt_fn: Callable[..., AppDef],
    cmpnt_args: List[str],
    cmpnt_args_defaults: Optional[Dict[str, Any]] = None,
    config: Optional[Dict[str, Any]] = None,
) -> ComponentArgs:
    """``parse_args`` split into positional (and positional-or-keyword) values, ``*args`` and
    keyword-only values, each of the type its annotation declares. TypeError for ``**kwargs``."""
    import inspect

    from torchx.specs._component_args import convert_value

    ns = parse_args(cmpnt_fn, cmpnt_args, cmpnt_args_defaults, config)
    positional: Dict[str, Any] = {}
    var_args: List[str] = []
    kwargs: Dict[str, Any] = {}
    for name, p in inspect.signature(cmpnt_fn).parameters.items():
        if p.kind == p.VAR_KEYWORD:
            raise TypeError(
                f"component fn param `{name}` is a '**kwargs' which is not supported; consider changing the "
                "type to a dict or explicitly declare the params"
            )
        value = getattr(ns, name)
        if p.kind == p.VAR_POSITIONAL:
            var_args = list(value)
        elif p.kind == p.KEYWORD_ONLY:
            kwargs[name] = convert_value(cmpnt_fn, name, value)
        else:
            positional[name] = convert_value(cmpnt_fn, name, value)
    if var_args and var_args[0] == "--":
        var_args = var_args[1:]
    return ComponentArgs(positional, var_args, kwargs)


def materialize_appdef(
    cmpnt_fn: Callable[..., AppDef],
    cmpnt_args: List[str],
    cmpnt_defaults: Optional[Dict[str, Any]] = None,
    config: Optional[Dict[str, Any]] = None,
) -> AppDef:
    """Calls the component with its parsed arguments (see parse_args); TypeError unless it
    returns an AppDef."""
    args = component_args_from_str(cmpnt_fn, cmpnt_args, cmpnt_defaults, config)
    app = cmpnt_fn(*args.positional_args.values(), *args.var_args, **args.kwargs)
    if not isinstance(app, AppDef):
        raise TypeError(f"Expected a component that returns `AppDef`, but got `{type(app)}`")
    return app


class MountOptionError(KeyError, ValueError):
    """A missing or unknown ``--mounts`` option: a KeyError as in TorchX, and a ValueError like
    every other bad-input error of this package."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def parse_mounts(opts: List[str]) -> List[Union[BindMount, VolumeMount, DeviceMount]]:
    """``--mounts`` tokens (``type=bind,src=/a,dst=/b,readonly``, ...) -> mount objects. A bad
    option (unknown, before ``type=``, or missing) raises MountOptionError, a bad type ValueError;
    both name the token and the valid choices."""
    import json

    try:
        return [_mount_from_json(m) for m in json.loads(core().parse_mounts(list(opts)))]
    except ValueError as e:
        text = str(e)
        if any(k in text for k in ("unknown mount option", "must be specified first", "missing required option")):
            raise MountOptionError(text) from None
        raise
