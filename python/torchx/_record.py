"""``@record``: a class that the ``dataclasses`` module reads as a dataclass, made without
importing it.

``dataclasses`` imports ``inspect`` (and with it ``ast``, ``dis`` and ``tokenize``), and
``@dataclass`` compiles three methods per class: together a third of what
``import torchx.runner, torchx.specs`` cost. The job model is a dozen such classes, so they are
made here instead:

- ``__init__`` is compiled on first use (the first instance, or the first read of
  ``Cls.__init__``, which ``inspect.signature`` does), with dataclass semantics: positional order,
  defaults, ``field(default_factory=...)``, ``field(kw_only=True)``, ``__post_init__``;
- ``__repr__``, ``__eq__`` (same class only, fields compared as a tuple), ``__hash__ = None``
  unless the class defines one, and ``__match_args__`` are what ``@dataclass`` makes;
- ``__dataclass_fields__`` holds real ``dataclasses.Field`` objects, built on first read, so
  ``dataclasses.fields``, ``asdict``, ``replace``, ``is_dataclass`` and ``@dataclass``
  subclasses work unchanged (reading it is what imports ``dataclasses``).

A method the class defines itself is kept, as ``@dataclass`` does.
"""

import reprlib
from typing import Any, Callable, ClassVar, Dict, List, Tuple

_MISSING: Any = object()


class _Factory:
    """The default an ``__init__`` parameter shows for a field with a default factory."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


class Field:
    """One field of a record: its name, type, default or default factory, and whether it is
    keyword-only. ``field()`` makes one in a class body."""

    __slots__ = ("name", "type", "default", "default_factory", "kw_only")

    def __init__(self, default: Any = _MISSING, default_factory: Any = _MISSING, kw_only: bool = False) -> None:
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.kw_only = kw_only

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r}, default_factory={self.default_factory!r})"


def field(*, default: Any = _MISSING, default_factory: Callable[[], Any] = _MISSING, kw_only: bool = False) -> Any:
    """``dataclasses.field`` for a record (the options the job model uses)."""
    return Field(default, default_factory, kw_only)


class _Params:
    """``__dataclass_params__``: what ``@dataclass`` subclasses read of their bases (``frozen``)."""

    init = repr = eq = match_args = True
    order = unsafe_hash = frozen = kw_only = slots = weakref_slot = False

    def __repr__(self) -> str:
        return "_DataclassParams(init=True,repr=True,eq=True,order=False,unsafe_hash=False,frozen=False)"


_PARAMS = _Params()


def fields_of(cls: type) -> Tuple[Field, ...]:
    """A record class's fields in declaration order (bases' first), without importing
    ``dataclasses``."""
    found: Tuple[Field, ...] = cls.__record_fields__  # type: ignore[attr-defined]
    return found


def _is_classvar(tp: Any) -> bool:
    return tp is ClassVar or getattr(tp, "__origin__", None) is ClassVar


def _from_dataclass(base: type) -> Tuple[Field, ...]:
    # A @dataclass between records (a record subclassing a dataclass subclass of a record): its
    # own fields, as records keep them.
    import dataclasses

    out = []
    for f in dataclasses.fields(base):
        mine = Field(f.default if f.default is not dataclasses.MISSING else _MISSING,
                     f.default_factory if f.default_factory is not dataclasses.MISSING else _MISSING,
                     bool(f.kw_only))
        mine.name, mine.type = f.name, f.type
        out.append(mine)
    return tuple(out)


def _own_annotations(cls: type) -> Dict[str, Any]:
    # The class's own annotations: in its __dict__ up to 3.13; from 3.14 they are made on first
    # read of the attribute (which, since 3.10, never falls through to a base class's).
    own = cls.__dict__.get("__annotations__")
    return dict(own) if own is not None else dict(getattr(cls, "__annotations__", None) or {})


def _collect(cls: type) -> Tuple[Field, ...]:
    by_name: Dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        if "__record_fields__" in base.__dict__:
            inherited: Tuple[Field, ...] = base.__dict__["__record_fields__"]
        elif isinstance(base.__dict__.get("__dataclass_fields__"), dict):
            inherited = _from_dataclass(base)
        else:
            continue
        for f in inherited:
            by_name[f.name] = f
    for name, tp in _own_annotations(cls).items():
        if _is_classvar(tp):
            continue
        value = cls.__dict__.get(name, _MISSING)
        f = value if isinstance(value, Field) else Field(default=value)
        f.name, f.type = name, tp
        if type(f.default) in (list, dict, set):
            raise ValueError(
                f"mutable default {type(f.default)} for field {name} of {cls.__qualname__} is not allowed:"
                " use default_factory"
            )
        if isinstance(value, Field):
            # As @dataclass leaves it: the class attribute is the default, or absent.
            if f.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        by_name[name] = f
    seen_default = False
    for f in by_name.values():
        if f.kw_only:
            continue
        has_default = f.default is not _MISSING or f.default_factory is not _MISSING
        if seen_default and not has_default:
            raise TypeError(f"non-default argument {f.name!r} of {cls.__qualname__} follows default argument")
        seen_default = seen_default or has_default
    return tuple(by_name.values())


def _compile_init(cls: type) -> Callable[..., None]:
    fields = fields_of(cls)
    env: Dict[str, Any] = {"_FACTORY": _FACTORY}
    positional: List[str] = []
    keyword: List[str] = []
    body: List[str] = []
    for i, f in enumerate(fields):
        param = f.name
        if f.default_factory is not _MISSING:
            env[f"_factory{i}"] = f.default_factory
            param += "=_FACTORY"
            body.append(f"    self.{f.name} = _factory{i}() if {f.name} is _FACTORY else {f.name}")
        else:
            if f.default is not _MISSING:
                env[f"_default{i}"] = f.default
                param += f"=_default{i}"
            body.append(f"    self.{f.name} = {f.name}")
        (keyword if f.kw_only else positional).append(param)
    params = ["self", *positional] + (["*", *keyword] if keyword else [])
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    if not body:
        body.append("    pass")
    src = f"def __init__({', '.join(params)}):\n" + "\n".join(body) + "\n"
    namespace: Dict[str, Any] = {}
    exec(compile(src, f"<record {cls.__qualname__}.__init__>", "exec"), env, namespace)  # noqa: S102
    init = namespace["__init__"]
    init.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init  # type: ignore[no-any-return]


class _LazyInit:
    """A record's ``__init__`` until first read: compiles the real one and puts it in its place
    (instantiation and ``inspect.signature`` both read it through here)."""

    def __init__(self, owner: type) -> None:
        self.owner = owner

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        init = _compile_init(self.owner)
        type.__setattr__(self.owner, "__init__", init)
        return init if obj is None else init.__get__(obj, cls)


class _LazyDataclassFields:
    """A record's ``__dataclass_fields__`` until first read: real ``dataclasses.Field`` objects."""

    def __init__(self, owner: type) -> None:
        self.owner = owner

    def __get__(self, obj: Any, cls: Any = None) -> Dict[str, Any]:
        import dataclasses

        out: Dict[str, Any] = {}
        for f in fields_of(self.owner):
            kwargs: Dict[str, Any] = {"kw_only": f.kw_only}
            if f.default is not _MISSING:
                kwargs["default"] = f.default
            if f.default_factory is not _MISSING:
                kwargs["default_factory"] = f.default_factory
            made = dataclasses.field(**kwargs)
            made.name, made.type = f.name, f.type
            made._field_type = dataclasses._FIELD  # type: ignore[attr-defined]  # what fields() keeps
            out[f.name] = made
        type.__setattr__(self.owner, "__dataclass_fields__", out)
        return out


@reprlib.recursive_repr()  # a record that holds itself prints "..." there, as a dataclass does
def _repr(self: Any) -> str:
    parts = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields_of(type(self)))
    return f"{type(self).__qualname__}({parts})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    names = [f.name for f in fields_of(type(self))]
    return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)


def _replace(self: Any, **changes: Any) -> Any:
    import dataclasses

    return dataclasses.replace(self, **changes)


def record(cls: type) -> type:
    """Makes ``cls`` a record (see the module's docstring)."""
    own = cls.__dict__
    cls.__record_fields__ = _collect(cls)  # type: ignore[attr-defined]
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    if "__init__" not in own:
        cls.__init__ = _LazyInit(cls)  # type: ignore[assignment,misc]
    if "__repr__" not in own:
        cls.__repr__ = _repr  # type: ignore[assignment]
    if "__eq__" not in own:
        cls.__eq__ = _eq  # type: ignore[assignment]
    if not explicit_hash:
        cls.__hash__ = None  # type: ignore[assignment]
    if "__replace__" not in own:  # copy.replace (3.13)
        cls.__replace__ = _replace  # type: ignore[attr-defined]
    if "__match_args__" not in own:
        cls.__match_args__ = tuple(f.name for f in fields_of(cls) if not f.kw_only)  # type: ignore[attr-defined,misc]
    cls.__dataclass_fields__ = _LazyDataclassFields(cls)  # type: ignore[attr-defined]
    cls.__dataclass_params__ = _PARAMS  # type: ignore[attr-defined]
    return cls
