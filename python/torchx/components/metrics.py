"""Metrics: ``tensorboard`` serves a log directory until a watched app exits."""

from torchx.components._builtin import builtin

tensorboard = builtin("metrics.tensorboard", __name__)
