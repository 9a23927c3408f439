"""Typed, namespaced keys into ``Resource.capabilities``.

A capability is stored under the plain string key ``"<namespace>.<name>"``, so resources stay
plain data; a ``CapabilityKey`` spells the key once and checks the value's type on read."""

from dataclasses import dataclass
from typing import Any, Generic, Optional, Type, TypeVar

from torchx.specs.api import Resource

V = TypeVar("V")


@dataclass(frozen=True)
class CapabilityKey(Generic[V]):
    namespace: str
    name: str
    type: Type[V]

    @property
    def key(self) -> str:
        return f"{self.namespace}.{self.name}"

    def set(self, resource: Resource, value: V) -> None:
        resource.capabilities[self.key] = value

    def get(self, resource: Resource, default: Optional[V] = None) -> Optional[V]:
        """The stored value, or ``default`` when absent; TypeError when the stored value is not a
        ``type`` (a bool does not pass for an int)."""
        if self.key not in resource.capabilities:
            return default
        value: Any = resource.capabilities[self.key]
        if (self.type is int and type(value) is bool) or not isinstance(value, self.type):
            raise TypeError(
                f"capability `{self.key}` expected `{self.type.__name__}`, got `{type(value).__name__}`: {value!r}"
            )
        return value
