"""Unique names for apps (TorchX's torchx.schedulers.ids): ``name-<random id>`` where the id is a
Kubernetes-safe lower-case string drawn from /dev/urandom (not affected by ``random.seed``). The
encoding is the core's (the CLI's app ids are made the same way)."""

import os
import struct
from typing import Optional

START_CANDIDATES: str = "bcdfghjklmnpqrstvwxz"
END_CANDIDATES: str = START_CANDIDATES + "012345679"


def random_uint64() -> int:
    """A random unsigned 64-bit int from os.urandom."""
    return struct.unpack("!Q", os.urandom(8))[0]


def random_id(max_length: Optional[int] = None) -> str:
    """A random id (typically 12-14 characters; a letter first, no vowels or '8'), at most
    ``max_length`` characters when given ("" when it is <= 0)."""
    if max_length is not None and max_length <= 0:
        return ""
    from torchx._core import core

    out = core().encode_random_id(random_uint64())
    return out if max_length is None else out[:max_length]


def make_unique(name: str, string_length: int = 0) -> str:
    """``{name}-{random_id}``; ``string_length`` > 0 caps the id's length."""
    return f"{name}-{random_id(string_length or None)}"
