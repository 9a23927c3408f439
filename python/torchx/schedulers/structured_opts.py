"""``StructuredOpts``: a scheduler's run options as a typed dataclass (TorchX HEAD's
torchx.schedulers.api.StructuredOpts). The fields become ``runopts`` (``as_runopts``: type,
default, required, help from the docstring under each field); a resolved cfg becomes an instance
(``from_cfg``), which also reads as the cfg mapping it came from.

Keys: a field's name, or its ``metadata={"cfg_key": "mail-user"}`` for names that cannot be
identifiers; camelCase spellings are accepted on input. A field that is itself a StructuredOpts is
a group, flattened to ``group.key``.
"""

import inspect
import re
import types
from dataclasses import MISSING, dataclass, fields
from typing import Any, Dict, Iterator, Mapping, Union, cast, get_args, get_type_hints

from torchx.specs.api import CfgVal, cases, runopts

# A field, its annotation on the next line(s), then a docstring: the help of that option.
_FIELD_DOC = re.compile(r'^\s+(\w+):\s*[^\n]+\n\s+"""(.+?)"""', re.MULTILINE | re.DOTALL)


def _unwrap_optional(tp: Any) -> Any:
    """``X | None`` -> ``X`` (a wider union keeps its other members)."""
    args = [a for a in get_args(tp) if a is not types.NoneType]
    if args and len(args) < len(get_args(tp)):
        return args[0] if len(args) == 1 else Union[tuple(args)]
    return tp


def _is_group(tp: Any) -> bool:
    try:
        return isinstance(tp, type) and issubclass(tp, StructuredOpts) and tp is not StructuredOpts
    except TypeError:  # generic aliases (list[str]) on some Pythons
        return False


@dataclass
class StructuredOpts(Mapping[str, CfgVal]):
    """Subclass as a ``@dataclass`` whose fields are the options (with a docstring each)."""

    @classmethod
    def from_cfg(cls, cfg: Mapping[str, CfgVal]) -> Any:
        """An instance from a cfg mapping (field name, ``cfg_key``, or camelCase keys; groups
        from their ``group.`` keys). Missing fields take their defaults."""
        hints = get_type_hints(cls)
        kwargs: Dict[str, Any] = {}
        for f in fields(cls):
            tp = _unwrap_optional(hints.get(f.name, str))
            if _is_group(tp):
                prefix = f"{f.name}."
                nested = {k[len(prefix):]: v for k, v in cfg.items() if k.startswith(prefix)}
                if nested or (f.default is MISSING and f.default_factory is MISSING):
                    kwargs[f.name] = tp.from_cfg(nested)  # a required group validates itself
                continue
            for key in (f.metadata.get("cfg_key", f.name), f.name, cases.snake_to_camel(f.name)):
                if key in cfg:
                    kwargs[f.name] = cfg[key]
                    break
        return cls(**kwargs)

    # The Mapping view (TorchX keeps it for plugins that read cfg["key"] / cfg.get("key")).
    def __getitem__(self, key: str) -> CfgVal:
        if "." in key:
            group, rest = key.split(".", 1)
            nested = getattr(self, cases.camel_to_snake(group), None)
            if isinstance(nested, StructuredOpts):
                return nested[rest]
            raise KeyError(key)
        names = {f.name for f in fields(self)}
        snake = cases.camel_to_snake(key)
        if snake in names:
            return getattr(self, snake)
        for f in fields(self):
            if f.metadata.get("cfg_key") == key:
                return getattr(self, f.name)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        hints = get_type_hints(type(self))
        for f in fields(self):
            if _is_group(_unwrap_optional(hints.get(f.name, str))):
                nested = getattr(self, f.name)
                if nested is not None:
                    yield from (f"{f.name}.{k}" for k in nested)
            else:
                yield f.metadata.get("cfg_key", f.name)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        try:
            self[key]
        except KeyError:
            return False
        return True

    def __or__(self, other: "StructuredOpts") -> Dict[str, CfgVal]:  # type: ignore[override]
        """Both as one cfg dict (``other`` wins on shared keys)."""
        return {**{k: self[k] for k in self}, **{k: other[k] for k in other}}

    @classmethod
    def get_docstrings(cls) -> Dict[str, str]:
        """Field -> the docstring under it (groups' as ``group.key``)."""
        docs: Dict[str, str] = {}
        try:
            source = inspect.getsource(cls)
        except (OSError, TypeError):
            return docs
        for m in _FIELD_DOC.finditer(source):
            docs[m.group(1)] = m.group(2).strip()
        hints = get_type_hints(cls)
        for f in fields(cls):
            tp = _unwrap_optional(hints.get(f.name, str))
            if _is_group(tp):
                docs.update({f"{f.name}.{k}": v for k, v in tp.get_docstrings().items()})
        return docs

    @classmethod
    def as_runopts(cls) -> runopts:
        """The fields as run options: required when the field has no default (a default factory
        counts as a default, shown as None), help from the field's docstring."""
        opts = runopts()
        hints = get_type_hints(cls)
        docs = cls.get_docstrings()
        for f in fields(cls):
            tp = _unwrap_optional(hints.get(f.name, str))
            if _is_group(tp):
                for key, opt in tp.as_runopts():
                    opts.add(f"{f.name}.{key}", type_=opt.opt_type, default=opt.default,
                             required=opt.is_required, help=opt.help)
                continue
            has_default = f.default is not MISSING
            opts.add(
                f.metadata.get("cfg_key", f.name),
                type_=tp,
                default=cast(Any, f.default) if has_default else None,
                required=not has_default and f.default_factory is MISSING,
                help=docs.get(f.name, f.name),
            )
        return opts
