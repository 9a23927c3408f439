"""Overlays: scheduler request fields an AppDef cannot express, kept in ``metadata`` and merged
into the request the scheduler builds (TorchX HEAD's ``torchx.specs.overlays``).

.. code-block:: python

    from torchx.specs.overlays import set_overlay, PUT, JOIN, DEL

    set_overlay(role, "kubernetes", "V1Pod", {"spec": {"nodeSelector": {"accelerator": "a100"}}})
    set_overlay(role, "kubernetes", "V1Pod", {"spec": {JOIN("containers", on="name"): [{"name": "c", "tty": True}]}})

Objects merge key by key, lists append, other values are replaced; ``PUT(field)`` replaces,
``JOIN(field, on=key)`` merges list items matched on ``key``, ``DEL(field)`` removes. Repeated
``set_overlay`` calls accumulate (the last operator on a field wins). The merge itself is the
core's (include/torchx/specs/overlays.h), the code the kubernetes scheduler applies at submit.
"""

import json
import logging
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Set, Tuple

from torchx._core import core
from torchx.specs.api import _decode_tuples, _encode_tuples  # a tuple (legacy PUT of a list) crosses as a marker

logger: logging.Logger = logging.getLogger(__name__)

_Overlay = Dict[str, Any]

# Marks `metadata[namespace]` as the nested {kind: overlay} form written by set_overlay.
_FORMAT_KEY = "__torchx_overlays__"
_PUT_PREFIX = "__put__:"
_JOIN_PREFIX = "__join__:"
_DEL_PREFIX = "__del__:"


def PUT(key: str) -> str:
    """An overlay key replacing ``key``'s value whole (no merge, no append)."""
    return f"{_PUT_PREFIX}{key}"


def JOIN(key: str, *, on: str) -> str:
    """An overlay key merging list ``key``'s items with the base's items that have the same
    ``on`` field (others are appended)."""
    return f"{_JOIN_PREFIX}{key}:{on}"


def DEL(key: str) -> str:
    """An overlay key removing ``key`` from the base (its value is ignored). Unlike
    ``{key: None}``, which sets the field to null, the field is then not sent at all."""
    return f"{_DEL_PREFIX}{key}"


def _dumps(value: Any) -> str:
    try:
        return json.dumps(_encode_tuples(value))
    except TypeError as e:
        raise TypeError(f"overlays hold JSON values (dicts, lists, str, numbers, bools, None): {e}") from None


def _write_back(target: Dict[str, Any], merged: Dict[str, Any]) -> None:
    # In place, keeping the caller's nested dicts (and their identity) where both sides have one.
    for k in [k for k in target if k not in merged]:
        del target[k]
    for k, v in merged.items():
        current = target.get(k)
        if isinstance(current, dict) and isinstance(v, dict):
            _write_back(current, v)
        else:
            target[k] = v


# TorchX raises TypeError for these (a value of the wrong shape) and ValueError for the rest.
_TYPE_ERRORS = ("type mismatch for attr", "JOIN requires", "overlay: expected dicts")


def apply_overlay(base: _Overlay, overlay: _Overlay, *, _resolve: bool = True) -> None:
    """Merges ``overlay`` into ``base`` in place: dicts merge, lists append, other values are
    replaced, and ``PUT``/``JOIN``/``DEL`` keys are carried out. TypeError when a field's value
    has a shape the base cannot take (a list over a str, JOIN on non-dicts).

    ``_resolve=False`` (set_overlay's accumulation) keeps operator keys as they are instead."""
    if not isinstance(base, dict) or not isinstance(overlay, dict):
        raise TypeError(f"apply_overlay merges a dict into a dict, got {type(overlay).__name__} into {type(base).__name__}")
    try:
        merged = json.loads(core().overlay_apply(_dumps(base), _dumps(overlay), _resolve))
    except ValueError as e:
        if str(e).startswith(_TYPE_ERRORS):
            raise TypeError(str(e)) from None
        raise
    _write_back(base, _decode_tuples(merged))


def _load_overlay_file(uri: str) -> _Overlay:
    """An overlay from a file (a path or an fsspec URI): JSON, else YAML (``!!python/tuple``
    allowed, as the legacy spelling of list replacement). ValueError unless it holds a dict."""
    url = uri if "://" in uri else f"file://{uri}"
    if url.startswith("file://"):
        with open(url[len("file://"):]) as f:
            text = f.read()
    else:
        try:
            import fsspec
        except ImportError:
            raise ValueError(f"overlay file `{url}`: reading it needs fsspec (`pip install fsspec`)") from None
        with fsspec.open(url, "r") as f:
            text = f.read()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        import yaml

        class _Loader(yaml.SafeLoader):
            pass

        _Loader.add_constructor(
            "tag:yaml.org,2002:python/tuple", lambda loader, node: tuple(loader.construct_sequence(node))
        )
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader with one added tag
    if not isinstance(data, dict):
        raise ValueError(f"overlay file `{url}` must contain a dict, got {type(data).__name__}")
    return data


def _check_kind(kind: str) -> None:
    if kind == _FORMAT_KEY:
        raise ValueError(f"overlay kind `{kind}` is reserved for the nested-format marker")


def set_overlay(target: Any, namespace: str, kind: str, overlay: _Overlay) -> None:
    """Adds ``overlay`` to ``target.metadata[namespace][kind]`` (a Role or an AppDef), merging
    with what earlier calls stored (operators kept for the scheduler to carry out)."""
    _check_kind(kind)
    metadata = target.metadata
    ns = metadata.get(namespace)
    if not isinstance(ns, dict):
        if ns is not None:
            logger.warning(
                "replacing non-dict value for namespace `%s` in metadata with nested overlay format. "
                "Previous value was: %s", namespace, type(ns).__name__,
            )
        ns = metadata[namespace] = {}
    ns[_FORMAT_KEY] = True
    existing = ns.get(kind)
    if not isinstance(existing, dict):
        existing = ns[kind] = {}
    apply_overlay(existing, overlay, _resolve=False)


def get_overlay(target: Any, namespace: str, kind: str, *, flat_fallback: bool = True) -> _Overlay:
    """The overlay stored for ``(namespace, kind)``, ``{}`` if none. A string in
    ``metadata[namespace]`` is a file to load. A dict written by set_overlay answers only for its
    kinds; an older flat dict (no kinds) is returned whole, with a warning, when ``flat_fallback``."""
    _check_kind(kind)
    ns = target.metadata.get(namespace)
    if isinstance(ns, str):
        ns = _load_overlay_file(ns)
    if not isinstance(ns, dict):
        return {}
    found = ns.get(kind)
    if isinstance(found, dict):
        return found
    chosen = json.loads(core().overlay_get(_dumps(ns), kind, flat_fallback))
    if not chosen:
        return {}
    logger.warning(
        "overlay kind `%s` not found in namespace `%s` (available kinds: %s). Treating `metadata[\"%s\"]` "
        "as a flat overlay. Migrate to `torchx.specs.overlays.set_overlay(target, \"%s\", \"%s\", overlay)` "
        "for the nested format",
        kind, namespace, [k for k in ns if k != _FORMAT_KEY], namespace, namespace, kind,
    )
    return ns


def validate_overlay(
    overlay: _Overlay,
    *,
    blocklist: Optional[List[str]] = None,
    forbidden_keys: Optional[Set[str]] = None,
    overlay_name: str = "overlay",
    suggestion: str = "",
) -> None:
    """ValueError when the overlay sets a ``blocklist`` field (one the Role sets) or a
    ``forbidden_keys`` field (one of another overlay kind); operator keys count as their field."""
    if blocklist:
        core().overlay_validate(_dumps(overlay), list(blocklist), overlay_name)
    if forbidden_keys:
        misplaced = {core().overlay_field_of(k) for k in overlay} & set(forbidden_keys)
        if misplaced:
            msg = f"{overlay_name} overlay contains misplaced keys: {misplaced}."
            raise ValueError(f"{msg} {suggestion}" if suggestion else msg)


@dataclass(frozen=True)
class OverlaySpec:
    """One scheduler overlay surface (namespace, kind, and the fields users must set through the
    Role instead), used on both the writing and the reading side."""

    namespace: str
    kind: str
    blocklist: Tuple[str, ...] = ()

    def set(self, target: Any, overlay: _Overlay) -> None:
        """set_overlay after checking the blocklist (so a bad key fails where it was written)."""
        validate_overlay(overlay, blocklist=list(self.blocklist), overlay_name=self.kind)
        set_overlay(target, self.namespace, self.kind, overlay)

    def get(self, target: Any) -> _Overlay:
        """The stored overlay (nested form only), checked against the blocklist."""
        overlay = get_overlay(target, self.namespace, self.kind, flat_fallback=False)
        validate_overlay(overlay, blocklist=list(self.blocklist), overlay_name=self.kind)
        return overlay


__all__ = [
    "DEL", "JOIN", "PUT", "OverlaySpec", "apply_overlay", "get_overlay", "set_overlay", "validate_overlay",
]

