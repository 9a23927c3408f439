"""Small helpers TorchX exposes under ``torchx.util`` (types, entry points, session, strings)."""
