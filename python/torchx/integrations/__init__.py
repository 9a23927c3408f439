"""Adapters that let other tools drive torchx (Ax's Client API: torchx.integrations.ax)."""
