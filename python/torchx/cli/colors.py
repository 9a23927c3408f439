"""TorchX's older name for torchx.util.colors."""

from torchx.util.colors import BLUE, ENDC, GRAY, GREEN, ORANGE  # noqa: F401
