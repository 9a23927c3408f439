"""Helpers components use to build AppDefs (TorchX's torchx.specs.builders)."""

import json
from typing import List, Union

from torchx._core import core
from torchx.specs.api import BindMount, DeviceMount, VolumeMount, _mount_from_json, make_app_handle

__all__ = ["make_app_handle", "parse_mounts"]


def parse_mounts(opts: List[str]) -> List[Union[BindMount, VolumeMount, DeviceMount]]:
    """``--mounts`` tokens (``type=bind,src=/a,dst=/b,readonly``, ...) -> mount objects; a
    ValueError names the bad token and the valid keys."""
    return [_mount_from_json(m) for m in json.loads(core().parse_mounts(list(opts)))]
