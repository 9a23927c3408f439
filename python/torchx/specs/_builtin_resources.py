"""The core's built-in named resource table as module-level factories (the modules
named_resources_aws and named_resources_generic expose their halves of it under TorchX's names)."""

import json
from typing import Callable, Dict

from torchx.specs.api import Resource, resource_from_json


def factories(prefix: str) -> Dict[str, Callable[[], Resource]]:
    """``name -> factory`` for the built-in resources whose name starts with ``prefix`` (each
    call returns a fresh Resource)."""
    from torchx._core import core

    def factory(name: str) -> Callable[[], Resource]:
        def make() -> Resource:
            return resource_from_json(json.loads(core().builtin_named_resource(name)))

        make.__name__ = name.replace(".", "_").replace("-", "_")
        make.__qualname__ = make.__name__
        make.__doc__ = f"The `{name}` named resource."
        return make

    return {n: factory(n) for n in core().builtin_named_resource_names() if n.startswith(prefix)}
