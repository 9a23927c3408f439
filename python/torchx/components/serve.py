"""Serving: ``torchserve`` registers a model with a TorchServe management API."""

from torchx.components._builtin import builtin

torchserve = builtin("serve.torchserve", __name__)
