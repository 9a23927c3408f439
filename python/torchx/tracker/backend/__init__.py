"""Tracker back-ends shipped with torchx (``fsspec``: runs kept as files on any fsspec file system)."""
