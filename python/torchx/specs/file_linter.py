"""The component linter (TorchX's torchx.specs.file_linter): checks, without importing it, that a
function in a Python file can be a component the CLI runs: every parameter annotated with a
primitive, ``Optional`` of one, or ``List``/``Dict``/``Tuple`` of primitives, and ``-> AppDef``.
Messages are TorchX's, word for word; ``torchx run file.py:fn`` refuses a component with any."""

import abc
import argparse
import ast
import inspect
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

_DOCS_URL = "https://meta-pytorch.org/torchx/latest/component_best_practices.html"


@dataclass
class LinterMessage:
    name: str
    description: str
    line: int
    char: int
    severity: str = "error"


def read_conf_file(conf_file: str) -> str:
    """The text of ``conf_file`` (the linter reads sources through this, so tests can patch it)."""
    with open(conf_file) as f:
        return f.read()


class TorchXArgumentHelpFormatter(
    argparse.RawDescriptionHelpFormatter,
    argparse.ArgumentDefaultsHelpFormatter,
    argparse.MetavarTypeHelpFormatter,
):
    """Component ``--help``: each argument's help ends with ``(required)`` or ``(default: X)``."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default is argparse.SUPPRESS:  # --help itself
            return text
        return f"{text} (required)" if action.required else f"{text} (default: {action.default})"


def get_fn_docstring(fn: Callable[..., object]) -> Tuple[str, Dict[str, str]]:
    """(description, {parameter: help}) from a Google-style docstring; parameters without help
    get " " (argparse drops empty help), a function without a docstring a hint to add one."""
    import docstring_parser

    helps = {name: " " for name in inspect.signature(fn).parameters}
    doc = inspect.getdoc(fn)
    if not doc:
        return f"{fn.__name__} TIP: improve this help string by adding a docstring\nto your component (see: {_DOCS_URL})", helps
    parsed = docstring_parser.parse(doc)
    for p in parsed.params:
        if p.description:
            helps[p.arg_name.lstrip("*")] = p.description
    description = "\n".join(d for d in (parsed.short_description, parsed.long_description) if d)
    return description or f"{fn.__name__} TIP: improve this help string by adding a docstring\nto your component (see: {_DOCS_URL})", helps


class ComponentFunctionValidator(abc.ABC):
    """One rule over a component's ``def``."""

    @abc.abstractmethod
    def validate(self, app_specs_func_def: ast.FunctionDef) -> List[LinterMessage]:
        raise NotImplementedError

    def _gen_linter_message(self, description: str, lineno: int) -> LinterMessage:
        return LinterMessage(name="TorchxFunctionValidator", description=description, line=lineno, char=0)


def _is_primitive(node: ast.expr) -> bool:
    return isinstance(node, ast.Name)


def _optional_inner(node: ast.expr) -> Optional[ast.expr]:
    """X of ``Optional[X]``, ``X | None`` or ``None | X``; None for other annotations."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Optional":
        return node.slice
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        if isinstance(node.right, ast.Constant) and node.right.value is None:
            return node.left
        if isinstance(node.left, ast.Constant) and node.left.value is None:
            return node.right
    return None


def _unannotated(tp: ast.expr) -> ast.expr:
    """T of ``Annotated[T, ...]`` (its metadata, e.g. a short flag, is not the type)."""
    if isinstance(tp, ast.Subscript) and isinstance(tp.value, (ast.Name, ast.Attribute)):
        name = tp.value.id if isinstance(tp.value, ast.Name) else tp.value.attr
        if name == "Annotated" and isinstance(tp.slice, ast.Tuple) and tp.slice.elts:
            return tp.slice.elts[0]
    return tp


def _type_problem(tp: ast.expr) -> Optional[str]:
    """Why an annotation cannot be a component parameter's, or None."""
    tp = _unannotated(tp)
    inner = _optional_inner(tp)
    if inner is not None:
        tp = inner
    if _is_primitive(tp):
        return None
    if not (isinstance(tp, ast.Subscript) and isinstance(tp.value, ast.Name)):
        return f"Unsupported argument type {ast.unparse(tp)!r}"
    container, generic = tp.value.id, tp.slice
    if container in ("Dict", "dict"):
        if not isinstance(generic, ast.Tuple) or len(generic.elts) != 2:
            return (f"Malformed dict type {ast.unparse(tp)!r}, expected exactly two type parameters"
                    f" ({container}[K, V])")
        key, value = generic.elts
        if not _is_primitive(key):
            return f"Non-primitive key type {ast.unparse(key)!r}"
        if not _is_primitive(value):
            return f"Non-primitive value type {ast.unparse(value)!r}"
        return None
    if container in ("List", "list"):
        return None if _is_primitive(generic) else f"Non-primitive element type {ast.unparse(generic)!r}"
    if container in ("Tuple", "tuple"):
        if not isinstance(generic, ast.Tuple):
            return (f"Unsupported tuple type {ast.unparse(tp)!r}: single-element tuples are valid typing but not"
                    f" supported for components; expected element types ({container}[T1, T2, ...])")
        for e in generic.elts:
            if not _is_primitive(e) and not (isinstance(e, ast.Constant) and e.value is Ellipsis):
                return f"Non-primitive element type {ast.unparse(e)!r}"
        return None
    return f"Unsupported container type {container!r}"


class ArgTypeValidator(ComponentFunctionValidator):
    """Every parameter is annotated with a supported type (``*args`` and ``**kwargs`` too)."""

    def validate(self, app_specs_func_def: ast.FunctionDef) -> List[LinterMessage]:
        fn = app_specs_func_def.name
        a = app_specs_func_def.args
        params = a.posonlyargs + a.args + a.kwonlyargs + [p for p in (a.vararg, a.kwarg) if p is not None]
        messages = []
        for p in params:
            if p.annotation is None:
                problem: Optional[str] = "Missing type annotation"
                where = repr(p.arg)
            else:
                problem = _type_problem(p.annotation)
                where = repr(ast.unparse(p))
            if problem:
                messages.append(self._gen_linter_message(f"{problem} for argument {where} in function {fn!r}", p.lineno))
        return messages


def _return_name(node: Optional[ast.expr]) -> Optional[str]:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


class ReturnTypeValidator(ComponentFunctionValidator):
    """The function is annotated to return ``supported_return_type`` (``AppDef``)."""

    def __init__(self, supported_return_type: str) -> None:
        self._supported = supported_return_type

    def validate(self, app_specs_func_def: ast.FunctionDef) -> List[LinterMessage]:
        fn = app_specs_func_def.name
        ret = _return_name(app_specs_func_def.returns)
        if ret is None:
            desc = (f"Function: {fn} missing return annotation or has unknown annotations."
                    f" Supported return annotation: {self._supported}")
        elif ret != self._supported:
            desc = f"Function: {fn} has incorrect return annotation, supported annotation: {self._supported}"
        else:
            return []
        return [self._gen_linter_message(desc, app_specs_func_def.lineno)]


def validate(
    path: str, component_function: str, validators: Optional[List[ComponentFunctionValidator]] = None
) -> List[LinterMessage]:
    """The linter messages for ``component_function`` in the file at ``path`` ([] when it is a
    valid component): a syntax error, a missing function, then each validator's findings."""
    if validators is None:
        validators = [ArgTypeValidator(), ReturnTypeValidator("AppDef")]
    try:
        tree = ast.parse(read_conf_file(path))
    except SyntaxError as e:
        return [LinterMessage(name="TorchXLinter", description=e.msg, line=e.lineno or 0, char=e.offset or 0)]
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == component_function:
            return [m for v in validators for m in v.validate(node)]
        if isinstance(node, ast.ClassDef) and node.name == component_function:
            # A class-based component (torchx-nightly): statically, only the return annotation of a
            # `build` in the class body; an inherited `build` is checked when the class is loaded.
            builds = [s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "build"]
            return [m for b in builds for m in ReturnTypeValidator("AppDef").validate(b)]
    return [LinterMessage(name="TorchXLinter", description=f"Function {component_function} not found", line=0, char=0)]
