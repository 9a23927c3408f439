"""Component lookup errors, under TorchX's module name."""

from torchx._exceptions import ComponentNotFoundException, ComponentValidationException

__all__ = ["ComponentNotFoundException", "ComponentValidationException"]
